"""Markdown tables and the bar chart of a Nexmark side-by-side run (from its JSON results).

A run with `--repeats N` holds N rows per (query, engine), one per round (`repeat`: 1..N); each
table cell is then the median with the min–max, and each ratio against Sluice FFM is taken per
round before it is summarized. One row per (query, engine) gives the tables of a single run."""
import statistics
from pathlib import Path

REFERENCE = "Sluice FFM"
# The ratios against Sluice FFM the tables show (the metrics' names in run_metrics).
RATIO_METRICS = ("events_per_s", "cpu_seconds_per_m_events", "max_rss_mb", "steady_cpu_seconds_per_m_events")


def fmt(value, digits=0):
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def fmt_ratio(value):
    return f"{value:.2f}"


def run_metrics(r):
    """The numbers the tables show of one run (a row of the JSON), None where it has none (n/a)."""
    result = r.get("engine_result") or {}
    opened, started = result.get("open_seconds"), result.get("started_ms_after_jvm_start")
    return {
        "events_per_s": r.get("events_per_s"),
        "cpu_seconds_per_m_events": r.get("cpu_seconds_per_m_events"),
        "max_rss_mb": r.get("max_rss_mb"),
        "rows_out": r.get("rows_out"),
        "wall_seconds": r.get("wall_seconds"),
        "engine_seconds": r.get("engine_seconds"),
        # Sluice's start-up split (its run summary); negative or missing for the other engines.
        "open_seconds": opened if opened is not None and opened >= 0 else None,
        "jvm_start_to_engine_seconds": started / 1000 if started is not None and started >= 0 else None,
        "events_per_engine_s": r["events"] / r["engine_seconds"] if r.get("engine_seconds") else None,
        # Kafka series only; 0 or missing when the process was too short to sample.
        "steady_events_per_s": r.get("steady_events_per_s") or None,
        "steady_cpu_seconds_per_m_events": r.get("steady_cpu_seconds_per_m_events") or None,
        "broker_cpu_seconds": r.get("broker_cpu_seconds"),
    }


def spread(values):
    """Median, min and max of the values that exist; None when there are none."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def spread_cell(stat, text=fmt):
    """One run: its number, as a single run's table shows it; several: `median (min–max)`."""
    if stat is None:
        return "n/a"
    if stat["n"] == 1:
        return text(stat["median"])
    return f"{text(stat['median'])} ({text(stat['min'])}–{text(stat['max'])})"


def round_of(r):
    return r.get("repeat", 1)  # results written before --repeats have one round


def round_ratios(runs, reference_runs, metric):
    """Each run's metric over Sluice FFM's in the same round: rounds alternated the engines, so
    a pair ran close in time and shares the machine's drift."""
    reference = {round_of(r): run_metrics(r)[metric] for r in reference_runs}
    ratios = []
    for r in runs:
        value, ref = run_metrics(r)[metric], reference.get(round_of(r))
        if value is not None and ref:
            ratios.append(value / ref)
    return ratios


def by_engine(rows):
    """(query, engine) -> its runs in round order; the keys in the order the engines first ran."""
    groups = {}
    for row in rows:
        groups.setdefault((row["query"], row["engine"]), []).append(row)
    return groups


def summarize(rows):
    """Per (query, engine) of a series: how many runs and how many failed, each metric's median
    and min/max over the runs that succeeded, and each ratio against Sluice FFM's over rounds."""
    groups = by_engine(rows)
    summary = []
    for (query, engine), runs in groups.items():
        ok = [r for r in runs if r.get("error") is None]
        reference = [r for r in groups.get((query, REFERENCE), []) if r.get("error") is None]
        per_run = [run_metrics(r) for r in ok]
        summary.append({
            "query": query, "engine": engine, "runs": len(runs), "failed": len(runs) - len(ok),
            "errors": list(dict.fromkeys(r["error"] for r in runs if r.get("error") is not None)),
            "metrics": {name: spread(m[name] for m in per_run) for name in (per_run[0].keys() if per_run else ())},
            "ratios_vs_ffm": {name: spread(round_ratios(ok, reference, name)) for name in RATIO_METRICS},
        })
    return summary


def parity_cell(parity, query, engine):
    """What the parity check said of this engine's output for the query (Kafka series only)."""
    entries = [e for e in parity if e["query"] == query]
    if engine == REFERENCE:
        differing = [e["engine"] for e in entries if e.get("comparison") and not e["comparison"]["equal"]]
        return f"**differs from {', '.join(differing)}**" if differing else ("reference" if entries else "not checked")
    entry = next((e for e in entries if e["engine"] == engine), None)
    if entry is None:
        return "not checked"
    if entry.get("comparison") is None:
        return "not compared"
    return "equal" if entry["comparison"]["equal"] else "**DIFFERENT** (its numbers measured other work)"


def differing(parity):
    """The (query, engine) pairs whose output differs from Sluice FFM's."""
    return [(e["query"], e["engine"]) for e in parity if e.get("comparison") and not e["comparison"]["equal"]]


def series_table(rows, series, parity=()):
    """One row per (query, engine) of a series; ratios against Sluice FFM of the same query. In the
    Kafka series a row whose output differs from the reference's says so: its numbers measured
    other work."""
    kafka = series == "kafka"
    head = ["query", "engine", "events/s", "CPU s per M events", "peak RSS MB", "events/s vs FFM",
            "CPU per event vs FFM", "RSS vs FFM", "rows out", "process wall s", "engine-reported s",
            "of which open s", "JVM start to engine s", "events/s by engine-reported time"]
    if kafka:
        head += ["steady events/s", "steady CPU s per M events", "steady CPU per event vs FFM", "broker CPU s",
                 "output vs Sluice FFM"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for s in summarize(rows):
        query, m, ratios = s["query"], s["metrics"], s["ratios_vs_ffm"]
        if s["failed"] == s["runs"]:
            cells = [query, s["engine"], f"not run: {'; '.join(s['errors'])}"] + [""] * (len(head) - 3)
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
            continue
        engine = s["engine"]
        if s["failed"]:
            # The numbers are of the runs that succeeded; say which share failed and why.
            engine += f" ({s['failed']} of {s['runs']} runs failed: {'; '.join(s['errors'])})".replace("|", "\\|")
        cells = [
            query, engine, spread_cell(m["events_per_s"]), spread_cell(m["cpu_seconds_per_m_events"], fmt2),
            spread_cell(m["max_rss_mb"]),
            *(spread_cell(ratios[name], fmt_ratio) for name in RATIO_METRICS[:3]),
            spread_cell(m["rows_out"]), spread_cell(m["wall_seconds"], fmt2), spread_cell(m["engine_seconds"], fmt2),
            spread_cell(m["open_seconds"], fmt3), spread_cell(m["jvm_start_to_engine_seconds"], fmt3),
            spread_cell(m["events_per_engine_s"]),
        ]
        if kafka:
            cells += [spread_cell(m["steady_events_per_s"]), spread_cell(m["steady_cpu_seconds_per_m_events"], fmt2),
                      spread_cell(ratios["steady_cpu_seconds_per_m_events"], fmt_ratio),
                      spread_cell(m["broker_cpu_seconds"], fmt1), parity_cell(parity, query, s["engine"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fmt1(value):
    return fmt(value, 1)


def fmt2(value):
    return fmt(value, 2)


def fmt3(value):
    return fmt(value, 3)


def parity_table(parity):
    """Per query, each engine's output against Sluice FFM's: equal, or the counts and examples."""
    if not parity:
        return "Parity was not checked in this run."
    lines = ["| query | compared with Sluice FFM | result | rows (FFM / other) | only in FFM | only in other |",
             "|---|---|---|---:|---:|---:|"]
    details = []
    for entry in parity:
        c = entry.get("comparison")
        if c is None:
            lines.append(f"| {entry['query']} | {entry['engine']} | not compared: {entry['reason']} | | | |")
            continue
        verdict = ("**equal**" if c["equal"] else "**DIFFERENT**") + ("" if c.get("normalized", True) else " (byte for byte)")
        lines.append(f"| {entry['query']} | {entry['engine']} | {verdict} | {c['rows_reference']:,} / {c['rows_other']:,} | "
                     f"{c['only_in_reference']:,} | {c['only_in_other']:,} |")
        if not c["equal"]:
            for side, key in (("Sluice FFM", "examples_only_in_reference"), (entry["engine"], "examples_only_in_other")):
                shown = "; ".join(f"`{e}`" for e in c.get(key, [])) or "none"
                details.append(f"- {entry['query']}, {entry['engine']}: rows only in {side}'s output, e.g. {shown}")
    return "\n".join(lines + ([""] + details if details else []))


def markdown(results):
    env = results["environment"]
    s = results["settings"]
    parts = [
        f"# Nexmark side by side, {results['stamp']}",
        "",
        f"- Machine: {env['cpu']} ({env['cores']} cores), {env['ram_gib']:.1f} GiB RAM, {env['kernel']}",
        f"- JVMs: Sluice and Kafka Streams on {env['java']}; Flink on {env['java17']}",
        f"- Versions: Flink {env['flink']} (Kafka connector {env['flink_kafka']}), Kafka broker and Kafka Streams "
        f"{env['kafka']}, DataFusion {env['datafusion']}",
        f"- Input: {s['bids']:,} Nexmark bid events (generator count {s['generator_count']:,}, seed {s['seed']})"
        + (f", as JSON in topic `{s['input_topic']}` ({s['topic_mb']:,.0f} MB of lz4 batches on disk) with "
           f"{s['partitions']} partition(s)" if s.get("input_topic") else "")
        + f"; parallelism {s['parallelism']} everywhere (Sluice lanes, Flink parallelism, Kafka Streams threads)",
        f"- Kafka clients as Sluice's defaults for every engine: producer acks=all, idempotence, lz4, "
        f"batch.size 524288, linger.ms {s.get('linger_ms', 20)}; consumer max.poll.records 8192, fetch.min.bytes 65536"
        f"{', fetch.max.wait.ms ' + str(s['fetch_max_wait_ms']) if s.get('fetch_max_wait_ms') else ''}",
        f"- Sluice: batch_size 8192, checkpoint every 10 s (at-least-once); Flink: MiniCluster, object reuse, "
        f"-Xmx2g, checkpoints off; Kafka Streams: at_least_once, commit every 10 s",
        "- Measured per process from outside (os.wait4): events/s = events / process wall time (JVM start "
        "included); CPU = user + system time of the process; peak RSS = ru_maxrss. 'engine-reported s' is "
        "each engine's own timing of its work (Sluice: pipeline run; Flink: job; Kafka Streams: start to close; "
        "DataFusion alone: plan to last batch). Sluice's start-up, split: 'of which open s' is planning and "
        "opening the pipeline inside its engine-reported time, 'JVM start to engine s' the JVM's start, the CLI "
        "and the configuration before it. In memory, Sluice is measured on the second run of its command line "
        "(the launcher writes its start-up cache at the exit of the first; that run's wall time is cold_wall_seconds "
        "in the JSON). Ratios: engine / Sluice FFM of the same query (CPU per event "
        "below 1 means cheaper than Sluice FFM).",
        *repeats_lines(s.get("repeats", 1)),
        "",
        "## Kafka → query → Kafka",
        "",
        series_table(results["kafka"], "kafka", results["parity"]) if results["kafka"] else "Not run.",
        "",
        "## Parity of the Kafka outputs (multisets of normalized rows)",
        "",
        parity_table(results["parity"]),
        "",
        "## In memory: generator → query → discard",
        "",
        series_table(results["memory"], "memory") if results["memory"] else "Not run.",
        "",
    ]
    notes = results.get("notes") or []
    if notes:
        parts += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(parts)


def repeats_lines(repeats):
    """The header's word on repeats; nothing for a single run, whose tables show single numbers."""
    if repeats <= 1:
        return []
    return [f"- Repeats: each engine ran {repeats} times per query, in {repeats} rounds that alternated the engines "
            f"(round 1 ran every engine once, in the tables' order, round 2 in that order rotated by one, and so on, so each engine ran first, second, … equally often over as many rounds as engines), so slow drift of the machine "
            f"hit every engine alike. Each number is the median of the runs, with their min–max in brackets; each "
            f"ratio is taken per round (an engine's run i against Sluice FFM's run i) and shown as the median "
            f"(min–max) over the rounds. Kafka series: every run read the same input topic and wrote an output topic "
            f"of its own; parity compared the first round's outputs. In memory, Sluice's later rounds reuse the "
            f"command line of the first, so they map its start-up cache too."]


def chart(results, path: Path):
    """Grouped bars: events/s and CPU seconds per million events, per query and engine, per series."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [(name, summarize(results[name])) for name in ("kafka", "memory") if results[name]]
    if not series:
        return False
    fig, axes = plt.subplots(len(series), 2, figsize=(14, 4.8 * len(series)), squeeze=False)
    titles = {"kafka": "Kafka → Kafka", "memory": "In memory"}
    for row, (name, summary) in enumerate(series):
        queries = list(dict.fromkeys(e["query"] for e in summary))
        engines = list(dict.fromkeys(e["engine"] for e in summary))
        width = 0.8 / max(len(engines), 1)
        repeated = any(e["runs"] > 1 for e in summary)
        for col, (metric, label) in enumerate((("events_per_s", "events/s (higher is better)"),
                                                ("cpu_seconds_per_m_events", "CPU s per million events (lower is better)"))):
            ax = axes[row][col]
            for i, engine in enumerate(engines):
                stats = []
                for q in queries:
                    e = next((x for x in summary if x["query"] == q and x["engine"] == engine), None)
                    stats.append(e["metrics"].get(metric) if e else None)
                values = [st["median"] if st else 0 for st in stats]
                # With repeats: the median's bar and the min–max as an error bar.
                errors = ([[st["median"] - st["min"] if st else 0 for st in stats],
                           [st["max"] - st["median"] if st else 0 for st in stats]] if repeated else None)
                positions = [j + (i - (len(engines) - 1) / 2) * width for j in range(len(queries))]
                ax.bar(positions, values, width, label=engine, yerr=errors, capsize=2 if repeated else 0)
            ax.set_xticks(range(len(queries)))
            ax.set_xticklabels(queries)
            ax.set_title(f"{titles[name]}: {label}")
            ax.grid(axis="y", alpha=0.3)
            if col == 0:
                ax.legend(fontsize=8)
    s = results["settings"]
    fig.suptitle(f"Nexmark side by side, {s['bids']:,} bids, {s['partitions']} partition(s), parallelism "
                 f"{s['parallelism']} — {results['environment']['cpu']} ({results['environment']['cores']} cores); "
                 + (f"medians of {s['repeats']} rounds, min–max as error bars; " if s.get("repeats", 1) > 1 else "")
                 + "a missing bar is an engine that did not run", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
