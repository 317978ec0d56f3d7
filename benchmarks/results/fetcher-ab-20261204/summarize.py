"""Sluice rows of the fetcher A/B: every run of each build pooled (medians, ranges) and each round's ratios to its own ceiling."""
import glob
import json
import os
import random
import statistics as st

HERE = os.path.dirname(os.path.abspath(__file__))
rows = {}
for f in sorted(glob.glob(os.path.join(HERE, '*-r[0-9]-kafka-*.json'))):
    v, r = os.path.basename(f).split('-')[:2]
    d = json.load(open(f))
    for row in d['rows']:
        if row['engine'] != 'Sluice FFM': continue
        key = (row['query'], v)
        rows.setdefault(key, []).append((r, row))


def pooled(v, q, key):
    """One measure over every run of one build and query (events/s is derived from each run)."""
    out = []
    for _, row in rows[(q, v)]:
        out += [x['events'] / x['seconds'] if key == 'events_per_s' else x[key] for x in row['raw']]
    return out


for (q, v), lst in sorted(rows.items()):
    evs, cpu, sev, scpu, rss = (pooled(v, q, k) for k in (
        'events_per_s', 'cpu_seconds', 'steady_events_per_s', 'steady_events_per_cpu_s', 'max_rss_mib'))
    rat = [(r, round(row['ratio_events_per_s'],2), round(row['ratio_events_per_cpu_s'],2), round(row['ratio_steady_events_per_cpu_s'],2)) for r, row in lst]
    print(f"{q} {v}: n={len(evs)} ev/s med {st.median(evs)/1e3:.0f}k [{min(evs)/1e3:.0f}-{max(evs)/1e3:.0f}] cpu s med {st.median(cpu):.2f} [{min(cpu):.2f}-{max(cpu):.2f}] "
          f"steady ev/s {st.median(sev)/1e3:.0f}k steady ev/cpu-s {st.median(scpu)/1e3:.0f}k [{min(scpu)/1e3:.0f}-{max(scpu)/1e3:.0f}] rss {min(rss):.0f}-{max(rss):.0f}")
    print("   ratios vs same-run ceiling (events/s, per CPU-s, steady per CPU-s):", rat)

# The latency pairs (latency-ab.sh): p99 / p99.9 at 50 % and CPU per M events, round by round.
lat = {}
for f in sorted(glob.glob(os.path.join(HERE, '*-r[0-9]-latency-*.json'))):
    v, r = os.path.basename(f).split('-')[:2]
    row = json.load(open(f))['rows'][0]
    lat.setdefault(v, []).append((r, row['p99_ms'], row['p999_ms'], round(row['cpu_s_per_m_events'], 2), round(row['max_rss_mib'])))
for v, lst in sorted(lat.items()):
    print(f"latency {v}: p99 median {st.median(x[1] for x in lst):.1f} ms; (round, p99, p99.9, CPU s/M, RSS MiB):", lst)

# Can the runs tell the builds apart? A permutation test of the difference of medians (12 runs each).
random.seed(1)
for q in ('q0', 'q1'):
    for key in ('events_per_s', 'steady_events_per_cpu_s', 'cpu_seconds'):
        a, b = pooled('old', q, key), pooled('new', q, key)
        d, pool, hits = abs(st.median(b) - st.median(a)), a + b, 0
        for _ in range(20000):
            random.shuffle(pool)
            hits += abs(st.median(pool[len(a):]) - st.median(pool[:len(a)])) >= d
        print(f"{q} {key}: new/old {st.median(b) / st.median(a):.3f}, permutation p = {hits / 20000:.2f}")
