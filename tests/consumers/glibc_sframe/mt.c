/* A multi-threaded program for the glibc SFrame test: its threads start
 * in clone3's child path and start_thread, its main thread in _start. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

static void *work(void *arg)
{
	for (unsigned long i = 0; i < 1000; i++)
		sink += i * (unsigned long)(size_t)arg;
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	for (size_t i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
			return 1;
	for (size_t i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%lu\n", sink);
	return 0;
}
