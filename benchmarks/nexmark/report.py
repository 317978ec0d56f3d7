"""Markdown tables and the bar chart of a Nexmark side-by-side run (from its JSON results)."""
from pathlib import Path

REFERENCE = "Sluice FFM"


def fmt(value, digits=0):
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def ratio(value, reference):
    if value is None or not reference:
        return "n/a"
    return f"{value / reference:.2f}"


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
    by_query = {}
    for row in rows:
        by_query.setdefault(row["query"], []).append(row)
    for query, engines in by_query.items():
        reference = next((r for r in engines if r["engine"] == REFERENCE and r.get("error") is None), None)
        for r in engines:
            if r.get("error") is not None:
                cells = [query, r["engine"], f"not run: {r['error']}"] + [""] * (len(head) - 3)
                lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
                continue
            cells = [
                query, r["engine"], fmt(r["events_per_s"]), fmt(r["cpu_seconds_per_m_events"], 2), fmt(r["max_rss_mb"]),
                ratio(r["events_per_s"], reference and reference["events_per_s"]),
                ratio(r["cpu_seconds_per_m_events"], reference and reference["cpu_seconds_per_m_events"]),
                ratio(r["max_rss_mb"], reference and reference["max_rss_mb"]),
                fmt(r.get("rows_out")), fmt(r["wall_seconds"], 2), fmt(r.get("engine_seconds"), 2),
                *start_cells(r.get("engine_result") or {}),
                fmt(r["events"] / r["engine_seconds"]) if r.get("engine_seconds") else "n/a",
            ]
            if kafka:
                steady = r.get("steady_cpu_seconds_per_m_events")
                cells += [fmt(r.get("steady_events_per_s")) if r.get("steady_events_per_s") else "n/a",
                          fmt(steady, 2) if steady else "n/a",
                          ratio(steady, reference and reference.get("steady_cpu_seconds_per_m_events")) if steady else "n/a",
                          fmt(r.get("broker_cpu_seconds"), 1), parity_cell(parity, query, r["engine"])]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def start_cells(result):
    """Sluice's start-up split (its run summary): planning and opening inside the engine-reported
    time, and the JVM's own start (the CLI, the configuration) before it; n/a for other engines."""
    opened = result.get("open_seconds")
    started = result.get("started_ms_after_jvm_start")
    return [fmt(opened, 3) if opened is not None and opened >= 0 else "n/a",
            fmt(started / 1000, 3) if started is not None and started >= 0 else "n/a"]


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
        f"batch.size 524288, linger.ms 20; consumer max.poll.records 8192, fetch.min.bytes 65536",
        f"- Sluice: batch_size 8192, checkpoint every 10 s (at-least-once); Flink: MiniCluster, object reuse, "
        f"-Xmx2g, checkpoints off; Kafka Streams: at_least_once, commit every 10 s",
        "- Measured per process from outside (os.wait4): events/s = events / process wall time (JVM start "
        "included); CPU = user + system time of the process; peak RSS = ru_maxrss. 'engine-reported s' is "
        "each engine's own timing of its work (Sluice: pipeline run; Flink: job; Kafka Streams: start to close; "
        "DataFusion alone: plan to last batch). Sluice's start-up, split: 'of which open s' is planning and "
        "opening the pipeline inside its engine-reported time, 'JVM start to engine s' the JVM's start, the CLI "
        "and the configuration before it. In memory, Sluice is measured on the second run of its command line "
        "(the launcher dumps a class archive at the exit of the first; that run's wall time is cold_wall_seconds "
        "in the JSON). Ratios: engine / Sluice FFM of the same query (CPU per event "
        "below 1 means cheaper than Sluice FFM).",
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


def chart(results, path: Path):
    """Grouped bars: events/s and CPU seconds per million events, per query and engine, per series."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [(name, results[name]) for name in ("kafka", "memory") if results[name]]
    if not series:
        return False
    fig, axes = plt.subplots(len(series), 2, figsize=(14, 4.8 * len(series)), squeeze=False)
    titles = {"kafka": "Kafka → Kafka", "memory": "In memory"}
    for row, (name, rows) in enumerate(series):
        queries = list(dict.fromkeys(r["query"] for r in rows))
        engines = list(dict.fromkeys(r["engine"] for r in rows))
        width = 0.8 / max(len(engines), 1)
        for col, (metric, label) in enumerate((("events_per_s", "events/s (higher is better)"),
                                                ("cpu_seconds_per_m_events", "CPU s per million events (lower is better)"))):
            ax = axes[row][col]
            for i, engine in enumerate(engines):
                values = []
                for q in queries:
                    r = next((x for x in rows if x["query"] == q and x["engine"] == engine), None)
                    values.append(r[metric] if r and r.get("error") is None else 0)
                positions = [j + (i - (len(engines) - 1) / 2) * width for j in range(len(queries))]
                ax.bar(positions, values, width, label=engine)
            ax.set_xticks(range(len(queries)))
            ax.set_xticklabels(queries)
            ax.set_title(f"{titles[name]}: {label}")
            ax.grid(axis="y", alpha=0.3)
            if col == 0:
                ax.legend(fontsize=8)
    s = results["settings"]
    fig.suptitle(f"Nexmark side by side, {s['bids']:,} bids, {s['partitions']} partition(s), parallelism "
                 f"{s['parallelism']} — {results['environment']['cpu']} ({results['environment']['cores']} cores); "
                 f"a missing bar is an engine that did not run", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
