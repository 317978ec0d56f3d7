#!/usr/bin/env python3
"""Pooled over all queries and rounds of ab_builds.py JSON lines: B / A per pair for wall, CPU,
engine and open seconds, the median, how often B was lower, and a two-sided sign test.
Usage: pooled.py FILE.jsonl..."""
import json,statistics,math,sys
from collections import defaultdict
rows=[json.loads(l) for f in sys.argv[1:] for l in open(f)]
by=defaultdict(dict)
for r in rows:
    if r['round']>0: by[(r['query'],r['round'])][r['engine']]=r
def sign(w,n):
    k=min(w,n-w); return min(1,2*sum(math.comb(n,i) for i in range(k+1))/2**n)
for k in ('wall_seconds','cpu_seconds','engine_seconds','open_seconds'):
    rs=[v['sluice-b'][k]/v['sluice-a'][k] for v in by.values() if v['sluice-a'].get(k) and v['sluice-b'].get(k)]
    w=sum(x<1 for x in rs); print(f"{k}: B/A median {statistics.median(rs):.3f}, B lower in {w} of {len(rs)}, p = {sign(w,len(rs)):.4f}")
