/*
 * Result objects for scripts. Histograms are copies; records stay the
 * workers' own C arrays (taken over, not copied) that an iterator
 * walks, so a million records never become a million Lua tables at
 * once. Durations are in microseconds (floats),
 * boundary stamps in nanoseconds of CLOCK_MONOTONIC (integers).
 */
#include <ctype.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "results/run_results.h"
#include "trace/collect.h"
#include "trace/join.h"
#include "trace/summary.h"
#include "script/engine.h"
#include "script/lhist.h"
#include "script/results.h"

#define REC_MT "netstage.record"
#define RESULTS_KEY "netstage.results"

/*
 * A side's results model, the script's own once run() returns (taken,
 * not copied), with what the iterator needs of its stages.
 */
struct kept {
	struct run_results *r;
	int nstages;
	const struct stage_def *defs;
	long nrecs;			/* in all */
	struct kept *peer;		/* --local: the server's results */
};

struct lrec {
	const struct trace_rec *r;
	const struct kept *k;
};

void results_free(struct kept *k)
{
	if (!k)
		return;
	results_free(k->peer);
	run_results_free(k->r);
	free(k);
}

/* r becomes the script's: the samples it lent stay with their side. */
static struct kept *keep(struct run_results *r)
{
	struct kept *k = xcalloc(1, sizeof(*k));

	free(r->samples);
	r->samples = NULL;
	r->nsample_sets = 0;
	k->r = r;
	k->nrecs = rec_set_count(&r->recs);
	if (r->traced) {
		k->nstages = trace_stage_count(&r->ts);
		k->defs = trace_stage_defs(&r->ts);
	}
	return k;
}

void script_keep_results(struct script *sc, struct run_results *r)
{
	results_free(sc->kept);
	sc->kept = keep(r);
}

void script_keep_peer(struct script *sc, struct run_results *peer)
{
	if (!sc->kept) {
		run_results_free(peer);
		return;
	}
	results_free(sc->kept->peer);
	sc->kept->peer = keep(peer);
}

static const char *key_text(const struct kept *k, const char *key)
{
	return kv_get(&k->r->keys, key);
}

static int boundary_by_name(const char *name)
{
	char up[32];
	size_t i;
	int b;

	for (i = 0; name[i] && i + 1 < sizeof(up); i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[i] = '\0';
	for (b = 0; b < NS_B_COUNT; b++)
		if (!strcmp(up, boundary_name(b)))
			return b;
	return -1;
}

static double stage_us(const struct lrec *r, int i)
{
	const struct stage_def *d = &r->k->defs[i];

	return (double)(r->r->b[d->to] - r->r->b[d->from]) / 1e3;
}

/* rec:stamp(boundary): its time in ns (boundary names as in docs). */
static int rec_stamp(lua_State *L)
{
	const struct lrec *r = luaL_checkudata(L, 1, REC_MT);
	const char *name = luaL_checkstring(L, 2);
	int b = boundary_by_name(name);
	luaL_Buffer all;

	if (b < 0) {
		luaL_buffinit(L, &all);
		for (b = 0; b < NS_B_COUNT; b++) {
			luaL_addstring(&all, b ? ", " : "");
			luaL_addstring(&all, boundary_name(b));
		}
		luaL_pushresult(&all);
		return luaL_error(L, "rec:stamp: no boundary '%s' (one of %s)",
				  name, lua_tostring(L, -1));
	}
	/* Not seen on this side, or in this transaction: nil, not 0. */
	if (!r->r->b[b])
		return lua_pushnil(L), 1;
	lua_pushinteger(L, (lua_Integer)r->r->b[b]);
	return 1;
}

/* rec:stamps(): { APP_SEND = ns, ... } for the boundaries seen. */
static int rec_stamps(lua_State *L)
{
	const struct lrec *r = luaL_checkudata(L, 1, REC_MT);
	int b;

	lua_newtable(L);
	for (b = 0; b < NS_B_COUNT; b++) {
		if (!r->r->b[b])
			continue;
		lua_pushinteger(L, (lua_Integer)r->r->b[b]);
		lua_setfield(L, -2, boundary_name(b));
	}
	return 1;
}

/* rec.held: {comm, pid, cpu} of the task its reader waited behind. */
static void push_held(lua_State *L, const struct trace_rec *r)
{
	if (!r->held_comm[0]) {
		lua_pushnil(L);
		return;
	}
	lua_createtable(L, 0, 3);
	lua_pushstring(L, r->held_comm);
	lua_setfield(L, -2, "comm");
	lua_pushinteger(L, r->held_pid);
	lua_setfield(L, -2, "pid");
	lua_pushinteger(L, r->held_cpu);
	lua_setfield(L, -2, "cpu");
}

static int rec_index(lua_State *L)
{
	const struct lrec *r = luaL_checkudata(L, 1, REC_MT);
	const char *k = luaL_checkstring(L, 2);
	int i, n = r->k->nstages;

	if (!strcmp(k, "flow"))
		lua_pushinteger(L, r->r->flow_id);
	else if (!strcmp(k, "thread"))
		lua_pushinteger(L, r->r->worker);
	else if (!strcmp(k, "seq"))
		lua_pushinteger(L, (lua_Integer)r->r->seq);
	else if (!strcmp(k, "total"))
		lua_pushnumber(L, (double)(r->r->b[r->k->defs[n - 1].to] -
				   r->r->b[r->k->defs[0].from]) / 1e3);
	else if (!strcmp(k, "t"))
		lua_pushnumber(L, ((double)r->r->b[r->k->defs[0].from] -
				   (double)r->k->r->t_start) / 1e9);
	else if (!strcmp(k, "kept"))
		lua_pushstring(L, r->r->slowest ? "slowest" : "sample");
	else if (!strcmp(k, "held"))
		push_held(L, r->r);
	else if (!strcmp(k, "retransmitted"))
		lua_pushboolean(L, r->r->b[NS_B_RETRANS] != 0);
	else if (!strcmp(k, "stamp"))
		lua_pushcfunction(L, rec_stamp);
	else if (!strcmp(k, "stamps"))
		lua_pushcfunction(L, rec_stamps);
	else {
		for (i = 0; i < n; i++)
			if (!strcmp(k, r->k->defs[i].name))
				return lua_pushnumber(L, stage_us(r, i)), 1;
		lua_pushnil(L);
	}
	return 1;
}

/* Upvalues: the kept results, the worker and the index in its array. */
static int records_next(lua_State *L)
{
	const struct kept *k = lua_touserdata(L, lua_upvalueindex(1));
	lua_Integer w = lua_tointeger(L, lua_upvalueindex(2));
	lua_Integer i = lua_tointeger(L, lua_upvalueindex(3));
	struct lrec *r;

	const struct rec_set *rs = &k->r->recs;

	while (w < rs->nworkers && i >= rs->n[w])
		w++, i = 0;
	if (w >= rs->nworkers)
		return 0;
	lua_pushinteger(L, w);
	lua_replace(L, lua_upvalueindex(2));
	lua_pushinteger(L, i + 1);
	lua_replace(L, lua_upvalueindex(3));
	r = lua_newuserdata(L, sizeof(*r));
	r->r = &rs->recs[w][i];
	r->k = k;
	luaL_setmetatable(L, REC_MT);
	return 1;
}

/* for rec in r.trace:records() do ... end */
static int records(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "_kept");
	lua_pushinteger(L, 0);
	lua_pushinteger(L, 0);
	lua_pushcclosure(L, records_next, 3);
	return 1;
}

static void set_num(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

static void push_keys(lua_State *L, const struct kept *k)
{
	size_t i;

	const struct kv_list *keys = &k->r->keys;

	lua_createtable(L, 0, (int)keys->n);
	for (i = 0; i < keys->n; i++) {
		const struct kv *v = &keys->v[i];

		if (v->type == KV_STR)
			lua_pushstring(L, v->text);
		else if (v->type == KV_INT)
			lua_pushinteger(L, (lua_Integer)strtoll(v->text, NULL,
								10));
		else
			lua_pushnumber(L, strtod(v->text, NULL));
		lua_setfield(L, -2, v->key);
	}
}


/*
 * Records only: trace.incomplete_missing, _disorder, _norecord and
 * trace.incomplete_at = { APP_DONE = n, ... }, as the trace_incomplete_*
 * keys; a tcp_rr server's trace.held_back, the histogram of how long
 * its responses held back waited (merge_held_back_ns()).
 */
static void push_incomplete(lua_State *L, const struct trace_summary *ts)
{
	int b;

	set_int(L, "incomplete_missing", (lua_Integer)ts->missing);
	set_int(L, "incomplete_disorder", (lua_Integer)ts->disorder);
	set_int(L, "incomplete_norecord", (lua_Integer)ts->norecord);
	lua_newtable(L);
	for (b = 0; b < NS_B_COUNT; b++)
		if (ts->bad_at[b]) {
			lua_pushinteger(L, (lua_Integer)ts->bad_at[b]);
			lua_setfield(L, -2, boundary_name(b));
		}
	lua_setfield(L, -2, "incomplete_at");
	if (merge_held_back_side(ts->side)) {
		lhist_push(L, &ts->held);
		lua_setfield(L, -2, "held_back");
	}
}

static void push_trace(lua_State *L, struct kept *k)
{
	const struct trace_summary *ts = &k->r->ts;
	const char *err = key_text(k, "trace_error");
	int traced = k->r->traced;
	int i;

	lua_newtable(L);
	lua_pushstring(L, !traced ? "off" : ts->hist_mode ? "hist"
							      : "records");
	lua_setfield(L, -2, "status");
	if (!traced) {
		lua_pushstring(L, err ? err : "off");
		lua_setfield(L, -2, "error");
	}
	set_int(L, "transactions", (lua_Integer)ts->complete);
	set_int(L, "incomplete", (lua_Integer)ts->incomplete);
	set_int(L, "lost", (lua_Integer)ts->lost);
	if (ts->has_retrans) {
		set_int(L, "retransmits", (lua_Integer)ts->retransmits);
		set_int(L, "retransmitted", (lua_Integer)ts->retransmitted);
	}
	if (traced && !ts->hist_mode)
		push_incomplete(L, ts);
	set_int(L, "records_kept", k->nrecs);
	lua_createtable(L, k->nstages, 0);
	lua_createtable(L, 0, k->nstages);
	for (i = 0; i < k->nstages; i++) {
		lua_pushstring(L, k->defs[i].name);
		lua_rawseti(L, -3, i + 1);
		lhist_push(L, &ts->stage[i]);
		lua_setfield(L, -2, k->defs[i].name);
	}
	lua_setfield(L, -3, "stage");
	lua_setfield(L, -2, "stages");
	lua_pushlightuserdata(L, k);
	lua_setfield(L, -2, "_kept");
	lua_pushcfunction(L, records);
	lua_setfield(L, -2, "records");
}

/* r.intervals: { {t_end = s, transactions = n, rate = , ...}, ... } */
static void push_intervals(lua_State *L, const struct kept *k)
{
	const struct run_results *r = k->r;
	long i;

	lua_createtable(L, (int)r->niv, 0);
	for (i = 0; i < r->niv; i++) {
		const struct interval_sum *s = &r->iv[i];

		lua_createtable(L, 0, 8);
		set_num(L, "t_end", s->t_end);
		set_int(L, "transactions", (lua_Integer)s->transactions);
		set_int(L, "bytes", (lua_Integer)s->bytes);
		set_num(L, "rate", s->rate);
		set_num(L, "mbps", s->mbps);
		if (r->iv_lat) {
			set_num(L, "p50", s->p50_us);
			set_num(L, "p90", s->p90_us);
			set_num(L, "p99", s->p99_us);
		}
		lua_rawseti(L, -2, i + 1);
	}
}

/* One side's results table (the server's too, as r.peer). */
static void push_results(lua_State *L, struct kept *k)
{
	const struct run_results *r = k->r;
	const char *t;

	lua_newtable(L);
	lua_pushstring(L, r->role);
	lua_setfield(L, -2, "side");
	lua_pushstring(L, r->workload);
	lua_setfield(L, -2, "workload");
	push_keys(L, k);
	lua_setfield(L, -2, "keys");
	set_num(L, "throughput", r->throughput);
	t = key_text(k, "num_transactions");
	set_int(L, "transactions", t ? strtoll(t, NULL, 10) : 0);
	if (r->has_lat) {
		lhist_push(L, &r->lat);
		lua_setfield(L, -2, "latency");
	}
	if (r->trace_asked) {
		push_trace(L, k);
		lua_setfield(L, -2, "trace");
	}
	push_intervals(L, k);
	lua_setfield(L, -2, "intervals");
	if (k->peer) {
		push_results(L, k->peer);
		lua_setfield(L, -2, "peer");
	}
}

int results_push(lua_State *L, struct kept *k)
{
	if (!k)
		return lua_pushnil(L), 1;
	if (lua_getfield(L, LUA_REGISTRYINDEX, RESULTS_KEY) == LUA_TTABLE)
		return 1;
	lua_pop(L, 1);
	push_results(L, k);
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, RESULTS_KEY);
	return 1;
}

void results_open(lua_State *L)
{
	static const luaL_Reg rec[] = { { "__index", rec_index }, { NULL, NULL } };

	lhist_open(L);
	luaL_newmetatable(L, REC_MT);
	luaL_setfuncs(L, rec, 0);
	lua_pop(L, 1);
}
