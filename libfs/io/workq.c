// SPDX-License-Identifier: GPL-2.0
/*
 * The per-AG worker pool: a fixed number of threads pulling groups of
 * ag_stride consecutive AGs from a shared counter in AG order.  The first
 * failure stops the hand-out; AGs already started finish.
 */
#include "libfs/io/workq.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct agq {
	const struct fs_ag_workq_opts *o;
	fs_ag_work_fn fn;
	void *priv;
	uint32_t stride, groups;
	uint32_t next_group;       /* atomic */
	int stop;                  /* atomic: set on the first failure */
	pthread_mutex_t lock;
	int ret;                   /* failure of the lowest AG */
	fs_agnumber_t ret_ag;
};

struct agq_worker {
	struct agq *q;
	unsigned id;
	pthread_t th;
};

/* Online CPUs (at least 1). */
static unsigned cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

static uint32_t stride_of(const struct fs_ag_workq_opts *o)
{
	return o->ag_stride ? o->ag_stride : 1;
}

unsigned fs_ag_workq_threads(const struct fs_ag_workq_opts *o)
{
	uint32_t stride = stride_of(o);
	uint64_t groups = ((uint64_t)o->ag_count + stride - 1) / stride;
	unsigned t = o->threads ? o->threads : cpu_count();

	if (groups < t)
		t = (unsigned)groups;
	return t ? t : 1;
}

static void record_failure(struct agq *q, fs_agnumber_t agno, int ret)
{
	pthread_mutex_lock(&q->lock);
	if (!q->ret || agno < q->ret_ag) {
		q->ret = ret;
		q->ret_ag = agno;
	}
	pthread_mutex_unlock(&q->lock);
	__atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
}

static void *worker_main(void *arg)
{
	struct agq_worker *w = arg;
	struct agq *q = w->q;

	while (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE)) {
		uint32_t gidx = __atomic_fetch_add(&q->next_group, 1, __ATOMIC_ACQ_REL);
		uint64_t first, end;

		if (gidx >= q->groups)
			break;
		first = (uint64_t)q->o->first_ag + (uint64_t)gidx * q->stride;
		end = first + q->stride;
		if (end > (uint64_t)q->o->first_ag + q->o->ag_count)
			end = (uint64_t)q->o->first_ag + q->o->ag_count;
		for (uint64_t ag = first; ag < end; ag++) {
			int ret = q->fn(q->priv, (fs_agnumber_t)ag, w->id);
			if (ret) {
				record_failure(q, (fs_agnumber_t)ag, ret);
				break;
			}
		}
	}
	return NULL;
}

int fs_ag_workq_run(const struct fs_ag_workq_opts *o, fs_ag_work_fn fn, void *priv)
{
	struct agq q = { .o = o, .fn = fn, .priv = priv, .stride = stride_of(o) };
	unsigned nthreads = fs_ag_workq_threads(o);
	struct agq_worker *ws;
	unsigned started = 0;
	int err = 0;

	q.groups = (uint32_t)(((uint64_t)o->ag_count + q.stride - 1) / q.stride);
	if (!q.groups)
		return 0;
	pthread_mutex_init(&q.lock, NULL);
	ws = calloc(nthreads, sizeof(*ws));
	if (!ws) {
		pthread_mutex_destroy(&q.lock);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		ws[i].q = &q;
		ws[i].id = i;
	}
	if (nthreads == 1) {
		worker_main(&ws[0]);
	} else {
		for (; started < nthreads; started++) {
			int e = pthread_create(&ws[started].th, NULL, worker_main, &ws[started]);
			if (e) {
				err = -e;
				break;
			}
		}
		if (started == 0) {
			/* no thread at all: do the work here rather than fail */
			err = 0;
			ws[0].id = 0;
			worker_main(&ws[0]);
		}
		for (unsigned i = 0; i < started; i++)
			pthread_join(ws[i].th, NULL);
		if (started > 0)
			err = 0;	/* fewer threads than asked still covered every AG */
	}
	free(ws);
	pthread_mutex_destroy(&q.lock);
	return q.ret ? q.ret : err;
}
