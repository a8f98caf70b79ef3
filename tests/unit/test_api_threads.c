/* Public API: handles are independent. Several files converted at once
 * from different threads give the same bytes and counts as one after
 * the other. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "eh2sframe.h"
#include "t.h"

#define NFILES 4
static const char *const files[NFILES] = {"/bin/ls", "/bin/cat", "/bin/cp",
					  "/bin/ls"};

typedef struct {
	const char *path;
	eh2s_status st;
	unsigned char *img;
	size_t size, converted;
} job;

static void *run(void *arg)
{
	job *j = arg;
	eh2s_file *f = NULL;
	eh2s_summary s;
	eh2s_verify_result v;
	eh2s_summary_init(&s);
	eh2s_verify_result_init(&v);
	j->st = eh2s_open(j->path, &f, NULL);
	if (!j->st)
		j->st = eh2s_convert(f, NULL, NULL);
	if (!j->st)
		j->st = eh2s_verify(f, &v, NULL);
	if (!j->st)
		j->st = eh2s_get_summary(f, &s, NULL);
	if (!j->st) {
		const unsigned char *p = eh2s_image(f, &j->size);
		j->img = malloc(j->size);
		if (j->img)
			memcpy(j->img, p, j->size);
		j->converted = s.converted;
	}
	eh2s_close(f);
	return NULL;
}

int main(void)
{
	job serial[NFILES], par[NFILES];
	pthread_t th[NFILES];
	memset(serial, 0, sizeof serial);
	memset(par, 0, sizeof par);
	for (int i = 0; i < NFILES; i++) {
		serial[i].path = par[i].path = files[i];
		run(&serial[i]);
		CHECK_EQ(serial[i].st, EH2S_OK);
	}
	for (int i = 0; i < NFILES; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, run, &par[i]), 0);
	for (int i = 0; i < NFILES; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NFILES; i++) {
		CHECK_EQ(par[i].st, EH2S_OK);
		CHECK(par[i].converted > 0);
		CHECK_EQ(par[i].converted, serial[i].converted);
		CHECK(par[i].img && serial[i].img && par[i].size == serial[i].size &&
		      memcmp(par[i].img, serial[i].img, par[i].size) == 0);
		free(par[i].img);
		free(serial[i].img);
	}
	return t_done("test_api_threads");
}
