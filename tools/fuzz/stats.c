// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - the report: how many calls, how fast, and per command how
 * often each errno came back, so the coverage shows: how many calls got
 * through to the deep paths ("ok"), how many stopped at which check.  The
 * same for the completions POLL returned, per opcode and status, and for
 * the memory churn.
 */
#include <string.h>

#include "fuzz.h"

struct fz_totals {
	uint64_t hist[FZ_NBUCKET][FZ_ERRNO_MAX + 1];
	uint64_t ns[FZ_NBUCKET][FZ_ERRNO_MAX + 1], max_ns[FZ_NBUCKET];
	uint64_t reopen_ns;
	uint64_t cqes[FZ_CQE_OPS][FZ_ERRNO_MAX + 1];
	uint64_t events[MRRC_EVENT_ERROR + 2];
	uint64_t churn[FZ_CH_NOPS];
	uint64_t calls, child_calls, reopens, child_crashes;
};

static struct fz_totals fz_tot;

const char *fz_errno_name(int err)
{
	const char *n;

	if (!err)
		return "ok";
	if (err >= FZ_ERRNO_MAX)
		return "E>=140";
	n = strerrorname_np(err);
	return n ? n : "E?";
}

static void fz_add_rows(uint64_t *to, const uint64_t *from, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		to[i] += from[i];
}

static void fz_sum(void)
{
	struct fz_totals *s = &fz_tot;
	unsigned int i, b;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < fz.nthread; i++) {
		const struct fz_thread *t = &fz.thread[i];

		fz_add_rows(&s->hist[0][0], &t->hist[0][0],
			    sizeof(s->hist) / sizeof(uint64_t));
		fz_add_rows(&s->cqes[0][0], &t->cqes[0][0],
			    sizeof(s->cqes) / sizeof(uint64_t));
		fz_add_rows(s->events, t->events, FZ_ARRAY_SIZE(s->events));
		fz_add_rows(s->churn, t->churn, FZ_ARRAY_SIZE(s->churn));
		fz_add_rows(&s->ns[0][0], &t->ns[0][0],
			    sizeof(s->ns) / sizeof(uint64_t));
		for (b = 0; b < FZ_NBUCKET; b++)
			s->max_ns[b] = FZ_MAX(s->max_ns[b], t->max_ns[b]);
		s->reopen_ns += t->reopen_ns;
		s->calls += t->calls;
		s->reopens += t->reopens;
		s->child_crashes += t->child_crashes;
	}
	fz_add_rows(&s->hist[0][0], &fz.shared->hist[0][0],
		    sizeof(s->hist) / sizeof(uint64_t));
	s->child_calls = fz.shared->calls;
	s->calls += s->child_calls;
}

/* One line: the total, "ok", then every errno seen, most frequent first. */
static void fz_row(FILE *f, const char *name, const uint64_t *v)
{
	uint64_t total = 0, left[FZ_ERRNO_MAX + 1];
	unsigned int i, best;

	for (i = 0; i <= FZ_ERRNO_MAX; i++)
		total += v[i];
	if (!total)
		return;
	memcpy(left, v, sizeof(left));
	fprintf(f, "  %-13s %10llu  ok=%llu", name, (unsigned long long)total,
		(unsigned long long)left[0]);
	left[0] = 0;
	for (;;) {
		best = 0;
		for (i = 1; i <= FZ_ERRNO_MAX; i++)
			if (left[i] > left[best])
				best = i;
		if (!left[best])
			break;
		fprintf(f, " %s=%llu", fz_errno_name((int)best),
			(unsigned long long)left[best]);
		left[best] = 0;
	}
	fputc('\n', f);
}

static void fz_report_cqes(FILE *f)
{
	static const char *const ops[FZ_CQE_OPS] = {
		"WRITE", "WRITE_IMM", "READ", "SEND", "RECV", "FETCH_ADD",
		"CMP_SWAP", "CRW", "STCRW", "RECV_IMM", "other",
	};
	static const char *const ev[MRRC_EVENT_ERROR + 2] = {
		"?", "CONNECT_REQUEST", "ESTABLISHED", "REJECTED",
		"UNREACHABLE", "DISCONNECTED", "DEVICE_REMOVAL", "ERROR",
	};
	unsigned int i;

	fprintf(f, "mrrc_fuzz: completions polled, per opcode and status:\n");
	for (i = 0; i < FZ_CQE_OPS; i++)
		if (ops[i])
			fz_row(f, ops[i], fz_tot.cqes[i]);
	fprintf(f, "  events       ");
	for (i = 0; i < FZ_ARRAY_SIZE(ev); i++)
		if (ev[i] && fz_tot.events[i])
			fprintf(f, " %s=%llu", ev[i],
				(unsigned long long)fz_tot.events[i]);
	fputc('\n', f);
}

static void fz_report_churn(FILE *f)
{
	static const char *const names[FZ_CH_NOPS] = {
		[FZ_CH_REMAP] = "remap", [FZ_CH_UNMAP] = "munmap",
		[FZ_CH_MREMAP_MOVE] = "mremap-move",
		[FZ_CH_MREMAP_DONTUNMAP] = "mremap-dontunmap",
		[FZ_CH_MREMAP_RESIZE] = "mremap-resize",
		[FZ_CH_DONTNEED] = "dontneed", [FZ_CH_MADVISE] = "madvise",
		[FZ_CH_MPROTECT] = "mprotect", [FZ_CH_TOUCH] = "touch",
		[FZ_CH_FORK] = "fork", [FZ_CH_MLOCK] = "mlock",
	};
	unsigned int i;

	fprintf(f, "mrrc_fuzz: memory churn:");
	for (i = 0; i < FZ_CH_NOPS; i++)
		fprintf(f, " %s=%llu", names[i],
			(unsigned long long)fz_tot.churn[i]);
	fputc('\n', f);
}

/* The average cost of each result that took a tenth of the time or more. */
static void fz_profile_results(FILE *f, unsigned int b, uint64_t ns)
{
	unsigned int e;

	for (e = 0; e <= FZ_ERRNO_MAX; e++)
		if (fz_tot.hist[b][e] && fz_tot.ns[b][e] * 10 >= ns)
			fprintf(f, " %s:%.0f", fz_errno_name((int)e),
				(double)fz_tot.ns[b][e] /
				(double)fz_tot.hist[b][e] / 1e3);
	fputc('\n', f);
}

/* -P: where the time goes. */
static void fz_report_profile(FILE *f)
{
	uint64_t n, ns, all = fz_tot.reopen_ns;
	unsigned int b, e;

	fprintf(f, "mrrc_fuzz: time per call (all threads): calls, average us, max us, share of the time, average us of the costly results\n");
	for (b = 0; b < FZ_NBUCKET; b++)
		for (e = 0; e <= FZ_ERRNO_MAX; e++)
			all += fz_tot.ns[b][e];
	for (b = 0; b < FZ_NBUCKET; b++) {
		for (n = 0, ns = 0, e = 0; e <= FZ_ERRNO_MAX; e++) {
			n += fz_tot.hist[b][e];
			ns += fz_tot.ns[b][e];
		}
		if (!n)
			continue;
		fprintf(f, "  %-13s %10llu %10.1f %10.1f %5.1f%% ",
			fz_bucket_name((int)b), (unsigned long long)n,
			(double)ns / (double)n / 1e3,
			(double)fz_tot.max_ns[b] / 1e3,
			all ? 100.0 * (double)ns / (double)all : 0.0);
		fz_profile_results(f, b, ns);
	}
	fprintf(f, "  %-13s %10llu %10.1f %10s %5.1f%%\n", "reopen",
		(unsigned long long)fz_tot.reopens,
		fz_tot.reopens ? (double)fz_tot.reopen_ns /
				 (double)fz_tot.reopens / 1e3 : 0.0, "",
		all ? 100.0 * (double)fz_tot.reopen_ns / (double)all : 0.0);
}

void fz_report(FILE *f, double elapsed)
{
	uint64_t ok = 0;
	unsigned int b;

	fz_sum();
	for (b = 0; b < FZ_NCMD; b++)
		ok += fz_tot.hist[b][0];
	fprintf(f, "mrrc_fuzz: errno histogram per command (calls, ok, then each errno, most frequent first):\n");
	for (b = 0; b < FZ_NBUCKET; b++)
		fz_row(f, fz_bucket_name((int)b), fz_tot.hist[b]);
	fz_report_cqes(f);
	fz_report_churn(f);
	if (fz.profile)
		fz_report_profile(f);
	fprintf(f, "mrrc_fuzz: seed %llu: %llu calls in %.1f s, %.0f calls/s; %llu commands ok; %llu calls by forked children, %llu context reopens\n",
		(unsigned long long)fz.seed, (unsigned long long)fz_tot.calls,
		elapsed, elapsed > 0 ? (double)fz_tot.calls / elapsed : 0.0,
		(unsigned long long)ok, (unsigned long long)fz_tot.child_calls,
		(unsigned long long)fz_tot.reopens);
	/* One line for scripts. */
	fprintf(f, "mrrc_fuzz: summary seed=%llu calls=%llu seconds=%.1f rate=%.0f ok=%llu children=%llu child_crashes=%llu\n",
		(unsigned long long)fz.seed, (unsigned long long)fz_tot.calls,
		elapsed, elapsed > 0 ? (double)fz_tot.calls / elapsed : 0.0,
		(unsigned long long)ok, (unsigned long long)fz_tot.child_calls,
		(unsigned long long)fz_tot.child_crashes);
}

/* Calls so far, for progress lines; racy reads are good enough. */
uint64_t fz_calls_now(void)
{
	uint64_t n = __atomic_load_n(&fz.shared->calls, __ATOMIC_RELAXED);
	unsigned int i;

	for (i = 0; i < fz.nthread; i++)
		n += __atomic_load_n(&fz.thread[i].calls, __ATOMIC_RELAXED);
	return n;
}

uint64_t fz_child_crashes(void)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < fz.nthread; i++)
		n += fz.thread[i].child_crashes;
	return n;
}

uint64_t fz_child_hangs(void)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < fz.nthread; i++)
		n += fz.thread[i].child_hangs;
	return n;
}
