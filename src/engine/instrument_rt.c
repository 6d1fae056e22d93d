/* polytune measurement instrumentation: present only in the builds polytune
   measures, never in the program it writes for the user. It times every
   execution of each SCoP region and, when asked, records what the region
   wrote. It includes no header, so that it cannot disturb the user's
   program (feature macros, -std=c99): the few C library functions it needs
   are declared under private names bound to their symbols. */
typedef unsigned long polytune_rt_size;
struct polytune_rt_ts { long s; long ns; };
extern int polytune_rt_clock(int, struct polytune_rt_ts *) __asm__("clock_gettime");
extern char *polytune_rt_getenv(const char *) __asm__("getenv");
extern void *polytune_rt_fopen(const char *, const char *) __asm__("fopen");
extern int polytune_rt_fprintf(void *, const char *, ...) __asm__("fprintf");
extern polytune_rt_size polytune_rt_fwrite(const void *, polytune_rt_size, polytune_rt_size, void *) __asm__("fwrite");
extern int polytune_rt_fclose(void *) __asm__("fclose");
extern int polytune_rt_atexit(void (*)(void)) __asm__("atexit");
extern void *polytune_rt_realloc(void *, polytune_rt_size) __asm__("realloc");
extern void polytune_rt_exit_now(int) __asm__("_exit");
#ifdef POLYTUNE_CALLGRIND
#include <valgrind/callgrind.h>
#define POLYTUNE_RT_TOGGLE() CALLGRIND_TOGGLE_COLLECT
/* The characterized run starts without instrumentation
   (--instr-atstart=no): what comes before the first region (reading or
   making the input, often as long as a kernel that is linear in it) runs
   at valgrind's plain speed instead of under the cache simulation, and
   the simulated caches start empty at the first region. */
#define POLYTUNE_RT_INSTRUMENT() CALLGRIND_START_INSTRUMENTATION
#else
#define POLYTUNE_RT_TOGGLE() ((void)0)
#define POLYTUNE_RT_INSTRUMENT() ((void)0)
#endif

#ifdef POLYTUNE_RT_PAPI
/* The PMU build (characterization by hardware counters, linked with
   -lpapi; not the corpus header's POLYTUNE_PAPI, which counts around its
   own kernel): PAPI's preset events counted natively around each execution of
   the regions, nothing outside them. Every event PAPI can add to one event
   set is counted; the others are named with PAPI's reason. The counts are
   written to the file named by POLYTUNE_COUNTERS at the stop
   (POLYTUNE_STOP_AFTER) or at exit, one line each (format read by
   lab::characterize): `counter NAME VALUE`, `skipped NAME REASON`,
   `error STEP REASON`, then `done`. */
#include <papi.h>
static const char *const polytune_rt_papi_names[] = {
  "PAPI_TOT_INS", "PAPI_LD_INS", "PAPI_SR_INS", "PAPI_L1_DCM", "PAPI_L1_ICM", "PAPI_L1_LDM",
  "PAPI_L1_STM",  "PAPI_L2_TCM", "PAPI_L3_TCM", "PAPI_BR_CN",  "PAPI_BR_MSP"};
#define POLYTUNE_RT_PAPI_EVENTS ((int)(sizeof polytune_rt_papi_names / sizeof polytune_rt_papi_names[0]))
static int polytune_rt_papi_state; /* 0 not started, 1 counting, -1 failed */
static int polytune_rt_papi_set = PAPI_NULL;
static int polytune_rt_papi_added;
static int polytune_rt_papi_index[POLYTUNE_RT_PAPI_EVENTS];
static long long polytune_rt_papi_total[POLYTUNE_RT_PAPI_EVENTS];
static void *polytune_rt_papi_file;

static void polytune_rt_papi_report(void)
{
  int i;
  if (!polytune_rt_papi_file)
    return;
  for (i = 0; i < polytune_rt_papi_added; i++)
    polytune_rt_fprintf(polytune_rt_papi_file, "counter %s %lld\n", polytune_rt_papi_names[polytune_rt_papi_index[i]],
                        polytune_rt_papi_total[i]);
  polytune_rt_fprintf(polytune_rt_papi_file, "done\n");
  polytune_rt_fclose(polytune_rt_papi_file);
  polytune_rt_papi_file = 0;
}

static void polytune_rt_papi_fail(const char *step, int rc)
{
  const char *why = PAPI_strerror(rc);
  polytune_rt_papi_state = -1;
  polytune_rt_papi_added = 0;
  if (polytune_rt_papi_file)
    polytune_rt_fprintf(polytune_rt_papi_file, "error %s %s\n", step, why ? why : "unknown PAPI error");
}

static void polytune_rt_papi_setup(void)
{
  const char *path = polytune_rt_getenv("POLYTUNE_COUNTERS");
  int i, rc;
  polytune_rt_papi_state = -1;
  if (!path || !*path || !(polytune_rt_papi_file = polytune_rt_fopen(path, "w")))
    return;
  polytune_rt_atexit(polytune_rt_papi_report);
  if ((rc = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT) {
    polytune_rt_papi_fail("PAPI_library_init", rc);
    return;
  }
  if ((rc = PAPI_create_eventset(&polytune_rt_papi_set)) != PAPI_OK) {
    polytune_rt_papi_fail("PAPI_create_eventset", rc);
    return;
  }
  for (i = 0; i < POLYTUNE_RT_PAPI_EVENTS; i++) {
    rc = PAPI_add_named_event(polytune_rt_papi_set, polytune_rt_papi_names[i]);
    if (rc == PAPI_OK)
      polytune_rt_papi_index[polytune_rt_papi_added++] = i;
    else {
      const char *why = PAPI_strerror(rc);
      polytune_rt_fprintf(polytune_rt_papi_file, "skipped %s %s\n", polytune_rt_papi_names[i], why ? why : "unknown PAPI error");
    }
  }
  polytune_rt_papi_state = 1;
}

static void polytune_rt_papi_start(void)
{
  int rc;
  if (polytune_rt_papi_state == 0)
    polytune_rt_papi_setup();
  if (polytune_rt_papi_state == 1 && polytune_rt_papi_added > 0 && (rc = PAPI_start(polytune_rt_papi_set)) != PAPI_OK)
    polytune_rt_papi_fail("PAPI_start", rc);
}

static void polytune_rt_papi_stop(void)
{
  long long v[POLYTUNE_RT_PAPI_EVENTS];
  int i, rc;
  if (polytune_rt_papi_state != 1 || polytune_rt_papi_added == 0)
    return;
  if ((rc = PAPI_stop(polytune_rt_papi_set, v)) != PAPI_OK) {
    polytune_rt_papi_fail("PAPI_stop", rc);
    return;
  }
  for (i = 0; i < polytune_rt_papi_added; i++)
    polytune_rt_papi_total[i] += v[i];
}
#define POLYTUNE_RT_COUNT_START() polytune_rt_papi_start()
#define POLYTUNE_RT_COUNT_STOP() polytune_rt_papi_stop()
#define POLYTUNE_RT_COUNT_REPORT() polytune_rt_papi_report()
#else
#define POLYTUNE_RT_COUNT_START() ((void)0)
#define POLYTUNE_RT_COUNT_STOP() ((void)0)
#define POLYTUNE_RT_COUNT_REPORT() ((void)0)
#endif

/* Executions of a region whose summaries get one line each; later ones
   are added into one line per array. */
#define POLYTUNE_RT_LINES 1000

static double polytune_rt_seconds[POLYTUNE_RT_REGIONS];
static long polytune_rt_count[POLYTUNE_RT_REGIONS];
static double polytune_rt_t0[POLYTUNE_RT_REGIONS];
static int polytune_rt_mode = -1; /* -1 not started, 0 time only, 1 also dump */
static long polytune_rt_stop_after;
/* POLYTUNE_PERTURB=1: after each region's execution, spin as long as it
   took (and 20 ms more, the first 50 times), so that what the program
   prints about its own speed changes from the plain run (the lab then
   leaves those lines out of the comparison). */
static int polytune_rt_perturb;
static long polytune_rt_perturbed;
static double polytune_rt_last_seconds;
static long polytune_rt_total;
static void *polytune_rt_file;
/* The array being recorded. */
static int polytune_rt_region = -1;
static const char *polytune_rt_name;
static int polytune_rt_kind; /* 0 none yet, 'f' floating, 'i' integer */
static long polytune_rt_n;
static double polytune_rt_sum, polytune_rt_wsum, polytune_rt_abs;
static unsigned long long polytune_rt_hash;
/* The full values of each region's latest execution. */
static char *polytune_rt_last[POLYTUNE_RT_REGIONS];
static polytune_rt_size polytune_rt_last_len[POLYTUNE_RT_REGIONS];
static polytune_rt_size polytune_rt_last_cap[POLYTUNE_RT_REGIONS];
static int polytune_rt_last_lost[POLYTUNE_RT_REGIONS];
static polytune_rt_size polytune_rt_limit = (polytune_rt_size)256 << 20;
/* Sums of the executions past POLYTUNE_RT_LINES, per region and array. */
struct polytune_rt_rest { int region; const char *name; int kind; long execs, n; double sum, wsum, abs; unsigned long long hash; };
static struct polytune_rt_rest polytune_rt_rests[64];
static int polytune_rt_nrests;
/* The parameters' values at each region's first execution. */
struct polytune_rt_param { int region; const char *name; long long value; };
static struct polytune_rt_param polytune_rt_params[256];
static int polytune_rt_nparams;
/* Executions under way (from begin to after), and whether two ever
   overlapped or came from different threads: a region run by several of
   the program's own threads (the kernel called inside its parallel
   region) cannot be timed or recorded one execution at a time, and the
   run says so. Threads that happen not to overlap count too: which of
   them runs first, and so which execution is recorded, depends on the
   scheduler (seen on a loaded machine: two runs recorded different
   halves and the program looked nondeterministic). */
static int polytune_rt_inside;
static int polytune_rt_overlap;
/* The first thread to run a region, by the address of a thread-local. */
static void *polytune_rt_owner;
static __thread char polytune_rt_self;
/* Whether this thread is the one recording (only one ever is). */
static __thread int polytune_rt_recording;

static double polytune_rt_now(void)
{
  struct polytune_rt_ts t;
  polytune_rt_clock(1 /* CLOCK_MONOTONIC */, &t);
  return (double)t.s + (double)t.ns * 1e-9;
}

static void polytune_rt_finish(void)
{
  int k;
  if (!polytune_rt_file)
    return;
  for (k = 0; k < polytune_rt_nrests; k++) {
    struct polytune_rt_rest *r = &polytune_rt_rests[k];
    if (r->kind == 'i')
      polytune_rt_fprintf(polytune_rt_file, "rest %d %s i %ld %ld %llu\n", r->region, r->name, r->execs, r->n, r->hash);
    else
      polytune_rt_fprintf(polytune_rt_file, "rest %d %s f %ld %ld %a %a %a\n", r->region, r->name, r->execs, r->n, r->sum, r->wsum, r->abs);
  }
  for (k = 0; k < polytune_rt_nparams && k < 256; k++)
    polytune_rt_fprintf(polytune_rt_file, "param %d %s %lld\n", polytune_rt_params[k].region, polytune_rt_params[k].name, polytune_rt_params[k].value);
  for (k = 0; k < POLYTUNE_RT_REGIONS; k++) {
    polytune_rt_fprintf(polytune_rt_file, "time %d %.9e %ld\n", k, polytune_rt_seconds[k], polytune_rt_count[k]);
    if (polytune_rt_last_lost[k])
      polytune_rt_fprintf(polytune_rt_file, "lost %d\n", k);
    else if (polytune_rt_last_len[k])
      polytune_rt_fwrite(polytune_rt_last[k], 1, polytune_rt_last_len[k], polytune_rt_file);
  }
  if (__atomic_load_n(&polytune_rt_overlap, __ATOMIC_RELAXED))
    polytune_rt_fprintf(polytune_rt_file, "concurrent\n");
  polytune_rt_fprintf(polytune_rt_file, "done\n");
  polytune_rt_fclose(polytune_rt_file);
  polytune_rt_file = 0;
}

/* Reads the run's settings and opens the side file: the mode to run in. */
static int polytune_rt_start(void)
{
  int mode = 0;
  const char *side = polytune_rt_getenv("POLYTUNE_SIDE");
  const char *dump = polytune_rt_getenv("POLYTUNE_DUMP");
  const char *stop = polytune_rt_getenv("POLYTUNE_STOP_AFTER");
  const char *limit = polytune_rt_getenv("POLYTUNE_DUMP_LIMIT");
  const char *perturb = polytune_rt_getenv("POLYTUNE_PERTURB");
  polytune_rt_perturb = perturb && perturb[0] == '1';
  if (stop)
    for (; *stop >= '0' && *stop <= '9'; stop++)
      polytune_rt_stop_after = polytune_rt_stop_after * 10 + (*stop - '0');
  if (limit) {
    polytune_rt_limit = 0;
    for (; *limit >= '0' && *limit <= '9'; limit++)
      polytune_rt_limit = polytune_rt_limit * 10 + (polytune_rt_size)(*limit - '0');
  }
  if (side && *side) {
    polytune_rt_file = polytune_rt_fopen(side, "w");
    if (polytune_rt_file) {
      polytune_rt_fprintf(polytune_rt_file, "polytune-side 1 %d\n", POLYTUNE_RT_REGIONS);
      polytune_rt_atexit(polytune_rt_finish);
      if (dump && dump[0] == '1')
        mode = 1;
    }
  }
  return mode;
}

/* Starts the simulator's instrumentation the first time (a no-op
   outside the characterized build). */
static void polytune_rt_instrument(void)
{
  static int started;
  if (!started) {
    started = 1;
    POLYTUNE_RT_INSTRUMENT();
  }
}

/* Records a parameter's value at region k's first execution (the
   wrapping calls it before the region's first begin only). */
__attribute__((unused)) static void polytune_rt_param(int k, const char *name, long long value)
{
  int i = __atomic_fetch_add(&polytune_rt_nparams, 1, __ATOMIC_ACQ_REL);
  if (i < 256) {
    polytune_rt_params[i].region = k;
    polytune_rt_params[i].name = name;
    polytune_rt_params[i].value = value;
  }
}

__attribute__((unused)) static void polytune_rt_begin(int k)
{
  static int starting;
  void *owner = 0;
  if (__atomic_fetch_add(&polytune_rt_inside, 1, __ATOMIC_ACQ_REL) != 0)
    __atomic_store_n(&polytune_rt_overlap, 1, __ATOMIC_SEQ_CST);
  if (!__atomic_compare_exchange_n(&polytune_rt_owner, &owner, (void *)&polytune_rt_self, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
      && owner != (void *)&polytune_rt_self)
    __atomic_store_n(&polytune_rt_overlap, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&polytune_rt_mode, __ATOMIC_ACQUIRE) < 0) {
    /* One thread starts; another arriving at the same time waits for it. */
    if (__atomic_exchange_n(&starting, 1, __ATOMIC_ACQ_REL) == 0)
      __atomic_store_n(&polytune_rt_mode, polytune_rt_start(), __ATOMIC_RELEASE);
    else
      while (__atomic_load_n(&polytune_rt_mode, __ATOMIC_ACQUIRE) < 0)
        ;
  }
  polytune_rt_t0[k] = polytune_rt_now();
  polytune_rt_instrument();
  /* Counting (characterization) starts after the clock is read and stops
     before it is read again: the clock's code is not the region's. */
  POLYTUNE_RT_TOGGLE();
  POLYTUNE_RT_COUNT_START();
}

__attribute__((unused)) static void polytune_rt_end(int k)
{
  POLYTUNE_RT_COUNT_STOP();
  POLYTUNE_RT_TOGGLE();
  polytune_rt_last_seconds = polytune_rt_now() - polytune_rt_t0[k];
  polytune_rt_seconds[k] += polytune_rt_last_seconds;
  polytune_rt_count[k]++;
}

__attribute__((unused)) static int polytune_rt_dumping(int k)
{
  /* Once two executions have overlapped (or a second thread has run the
     region), none records any more: at most the one that started
     recording alone finishes. */
  if (polytune_rt_mode != 1 || __atomic_load_n(&polytune_rt_overlap, __ATOMIC_SEQ_CST))
    return 0;
  polytune_rt_recording = 1;
  polytune_rt_region = k;
  polytune_rt_name = 0;
  polytune_rt_last_len[k] = 0;
  polytune_rt_last_lost[k] = 0;
  return 1;
}

static void polytune_rt_text(const char *s, polytune_rt_size n)
{
  int k = polytune_rt_region;
  if (polytune_rt_last_lost[k])
    return;
  if (polytune_rt_last_len[k] + n > polytune_rt_last_cap[k]) {
    polytune_rt_size cap = polytune_rt_last_cap[k] ? 2 * polytune_rt_last_cap[k] : 65536;
    char *p;
    while (cap < polytune_rt_last_len[k] + n)
      cap *= 2;
    p = cap > polytune_rt_limit ? 0 : (char *)polytune_rt_realloc(polytune_rt_last[k], cap);
    if (!p) {
      polytune_rt_last_lost[k] = 1;
      return;
    }
    polytune_rt_last[k] = p;
    polytune_rt_last_cap[k] = cap;
  }
  {
    char *d = polytune_rt_last[k] + polytune_rt_last_len[k];
    polytune_rt_size i;
    for (i = 0; i < n; i++)
      d[i] = s[i];
  }
  polytune_rt_last_len[k] += n;
}

static void polytune_rt_str(const char *s)
{
  polytune_rt_size n = 0;
  while (s[n])
    n++;
  polytune_rt_text(s, n);
}

static void polytune_rt_ulong(unsigned long long v)
{
  char b[24];
  int i = 24;
  do {
    b[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  polytune_rt_text(b + i, (polytune_rt_size)(24 - i));
}

/* Closes the array being recorded: its summary line, its full values. */
static void polytune_rt_close(void)
{
  int k = polytune_rt_region;
  long e = polytune_rt_count[k];
  if (!polytune_rt_name)
    return;
  if (e <= POLYTUNE_RT_LINES) {
    if (polytune_rt_kind == 'i')
      polytune_rt_fprintf(polytune_rt_file, "sum %d %ld %s i %ld %llu\n", k, e, polytune_rt_name, polytune_rt_n, polytune_rt_hash);
    else
      polytune_rt_fprintf(polytune_rt_file, "sum %d %ld %s f %ld %a %a %a\n", k, e, polytune_rt_name, polytune_rt_n, polytune_rt_sum, polytune_rt_wsum, polytune_rt_abs);
  } else {
    int r;
    for (r = 0; r < polytune_rt_nrests; r++)
      if (polytune_rt_rests[r].region == k && polytune_rt_rests[r].name == polytune_rt_name)
        break;
    if (r == polytune_rt_nrests && r < 64) {
      struct polytune_rt_rest z = {k, polytune_rt_name, polytune_rt_kind, 0, 0, 0, 0, 0, 1469598103934665603ULL};
      polytune_rt_rests[polytune_rt_nrests++] = z;
    }
    if (r < 64) {
      struct polytune_rt_rest *x = &polytune_rt_rests[r];
      x->execs++;
      x->n += polytune_rt_n;
      x->sum += polytune_rt_sum;
      x->wsum += polytune_rt_wsum;
      x->abs += polytune_rt_abs;
      x->hash = (x->hash ^ polytune_rt_hash) * 1099511628211ULL;
    }
  }
  polytune_rt_str("end r");
  polytune_rt_ulong((unsigned long long)k);
  polytune_rt_str(".");
  polytune_rt_str(polytune_rt_name);
  polytune_rt_str("\n");
  polytune_rt_name = 0;
}

/* Opens array `name` of region k; its values follow. */
__attribute__((unused)) static void polytune_rt_array(const char *name, int floating)
{
  polytune_rt_close();
  polytune_rt_name = name;
  polytune_rt_kind = floating ? 'f' : 'i';
  polytune_rt_n = 0;
  polytune_rt_sum = polytune_rt_wsum = polytune_rt_abs = 0;
  polytune_rt_hash = 1469598103934665603ULL;
  polytune_rt_str("begin r");
  polytune_rt_ulong((unsigned long long)polytune_rt_region);
  polytune_rt_str(".");
  polytune_rt_str(name);
  polytune_rt_str(floating ? " bits\n" : "\n");
}

__attribute__((unused)) static void polytune_rt_f(double v)
{
  union { double d; unsigned long long u; } x;
  char b[17];
  int i;
  /* A weight in [1, 2) that depends on the position: a change anywhere
     moves the weighted sum, even one that keeps the plain sum. */
  unsigned long long h = (unsigned long long)polytune_rt_n * 0x9E3779B97F4A7C15ULL;
  double w = 1.0 + (double)(h >> 11) * (1.0 / 9007199254740992.0);
  polytune_rt_sum += v;
  polytune_rt_wsum += w * v;
  polytune_rt_abs += v < 0 ? -v : v;
  polytune_rt_n++;
  x.d = v;
  for (i = 15; i >= 0; i--) {
    b[i] = "0123456789abcdef"[x.u & 15];
    x.u >>= 4;
  }
  b[16] = '\n';
  polytune_rt_text(b, 17);
}

__attribute__((unused)) static void polytune_rt_i(long long v)
{
  unsigned long long u = (unsigned long long)v;
  polytune_rt_hash = (polytune_rt_hash ^ u) * 1099511628211ULL;
  polytune_rt_hash = (polytune_rt_hash ^ (unsigned long long)polytune_rt_n) * 1099511628211ULL;
  polytune_rt_n++;
  if (v < 0) {
    polytune_rt_str("-");
    u = 0 - u;
  }
  polytune_rt_ulong(u);
  polytune_rt_str("\n");
}

/* After a region's execution (and its record): a characterization run
   stops after POLYTUNE_STOP_AFTER executions in all. */
__attribute__((unused)) static void polytune_rt_after(int k)
{
  (void)k;
  if (polytune_rt_recording) {
    polytune_rt_close();
    polytune_rt_region = -1;
    polytune_rt_recording = 0;
  }
  __atomic_fetch_sub(&polytune_rt_inside, 1, __ATOMIC_ACQ_REL);
  if (polytune_rt_perturb) {
    double until = polytune_rt_now() + polytune_rt_last_seconds + (polytune_rt_perturbed++ < 50 ? 0.02 : 0.0);
    while (polytune_rt_now() < until)
      ;
  }
  if (polytune_rt_stop_after > 0 && ++polytune_rt_total >= polytune_rt_stop_after) {
    polytune_rt_finish();
    POLYTUNE_RT_COUNT_REPORT();
    polytune_rt_exit_now(0);
  }
}

/* The characterized build's warm-up (engine::instrument::warm): before a
   region's first execution, a load of each element of its footprint, at
   most this many bytes of each array. */
#define POLYTUNE_RT_WARM_BYTES (8L << 20)
/* A load whose value is used: valgrind's translator drops a load whose
   result nothing reads, volatile or not, and the simulated caches would
   never see it. */
static volatile unsigned char polytune_rt_sink;
#define POLYTUNE_RT_TOUCH(x) (polytune_rt_sink ^= *(const volatile unsigned char *)&(x))

/* Whether region k warms the caches now: once per region, the first
   time, which also starts the simulator's instrumentation. */
__attribute__((unused)) static int polytune_rt_warming(int k)
{
  static char warmed[POLYTUNE_RT_REGIONS];
  if (warmed[k])
    return 0;
  warmed[k] = 1;
  polytune_rt_instrument();
  return 1;
}

/* One element: floating-point values are recorded exactly (their bits),
   integers as integers, pointers as 0 (an address differs from one run to
   the next: a pointer-valued element, `rows[i] = rows[i - 1] + m`, is
   not compared; what is read through it is). The element is copied and
   read by its type's class (__builtin_classify_type, GCC's and Clang's:
   8 real, 5 pointer, 9 complex, else integer-like), which needs neither
   _Generic (-std=c99 lacks it) nor a cast that a pointer would refuse. */
__attribute__((unused)) static void polytune_rt_put_bytes(const void *p, unsigned long n, int cls)
{
  if (cls == 8 || cls == 9) {
    if (n == sizeof(float)) {
      float v;
      __builtin_memcpy(&v, p, sizeof v);
      polytune_rt_f((double)v);
    } else if (n == sizeof(double)) {
      double v;
      __builtin_memcpy(&v, p, sizeof v);
      polytune_rt_f(v);
    } else if (n == sizeof(long double) && cls == 8) {
      long double v;
      __builtin_memcpy(&v, p, sizeof v);
      polytune_rt_f((double)v);
    } else {
      /* A complex value: its real part, then its imaginary part. */
      if (n == 2 * sizeof(double)) {
        double v[2];
        __builtin_memcpy(v, p, sizeof v);
        polytune_rt_f(v[0]);
        polytune_rt_f(v[1]);
      } else {
        float v[2];
        __builtin_memcpy(v, p, n < sizeof v ? n : sizeof v);
        polytune_rt_f((double)v[0]);
        polytune_rt_f((double)v[1]);
      }
    }
  } else if (cls == 5) {
    polytune_rt_i(0);
  } else if (n == 1) {
    signed char v;
    __builtin_memcpy(&v, p, 1);
    polytune_rt_i(v);
  } else if (n == 2) {
    short v;
    __builtin_memcpy(&v, p, 2);
    polytune_rt_i(v);
  } else if (n == 4) {
    int v;
    __builtin_memcpy(&v, p, 4);
    polytune_rt_i(v);
  } else {
    long long v;
    __builtin_memcpy(&v, p, sizeof v);
    polytune_rt_i(v);
  }
}
#define POLYTUNE_RT_PUT(x) \
  do { \
    __typeof__(x) polytune_rt_v = (x); \
    polytune_rt_put_bytes(&polytune_rt_v, sizeof polytune_rt_v, __builtin_classify_type(x)); \
  } while (0)
#define POLYTUNE_RT_FLOATING(x) (__builtin_classify_type(x) == 8 || __builtin_classify_type(x) == 9)
