package dev.sluice.cli;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.cli.InProcessCli.Result;
import dev.sluice.pluginhost.PluginCounters;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.bouncycastle.jcajce.provider.digest.Keccak;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example plugins (rust/plugins: a Rust library and one in plain C, built into
 * target/plugins by the Maven build) loaded by path in whole pipelines through the CLI: a plugin
 * source, two plugin transforms, SQL calling native UDFs, a plugin sink; every load error at
 * validate; error statuses and panics at run time.
 */
class PluginPipelineTest {

    static final Path BUILT = Path.of("target", "plugins").toAbsolutePath();
    static final String RUST = "libsluice_examples.so";
    static final String C = "libsluice_c_example.so";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @BeforeEach
    void copyPlugins() throws IOException {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        for (String lib : List.of(RUST, C)) {
            Files.copy(BUILT.resolve(lib), plugins.resolve(lib), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private Path write(String yaml) throws IOException {
        Path file = dir.resolve("p.yaml");
        Files.writeString(file, yaml);
        return file;
    }

    private Result run(Path file) {
        return sluice(
                "run", file.toString(), "--state-dir", dir.resolve("state").toString());
    }

    private static List<JsonNode> rows(Path file) throws IOException {
        List<JsonNode> rows = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank()) {
                rows.add(JSON.readTree(line));
            }
        }
        return rows;
    }

    @Test
    void pluginSourceTransformsUdfsAndSinkRunEndToEnd() throws IOException {
        Path file = write("""
                plugins:
                  udfs:
                    - path: plugins/libsluice_examples.so
                    - path: plugins/libsluice_c_example.so
                      functions: [c_clamp]
                sources:
                  seq:
                    type: plugin
                    path: plugins/libsluice_examples.so
                    component: sequence
                    options: {count: 5000, rows_per_poll: 700}
                transforms:
                  upper:
                    type: plugin
                    from: seq
                    path: plugins/libsluice_examples.so
                    component: uppercase
                    options: {columns: [label]}
                  scaled:
                    type: plugin
                    from: upper
                    path: plugins/libsluice_c_example.so
                    component: c_scale
                    options: {column: id, factor: 3}
                  enriched:
                    type: sql
                    sql: |
                      SELECT id, label,
                             keccak256(CAST(label AS BYTEA)) AS k,
                             hex_encode(CAST(label AS BYTEA)) AS h,
                             base58_encode(CAST(label AS BYTEA)) AS b58,
                             geohash(CAST(id % 170 AS DOUBLE) - 85.0, CAST(id % 350 AS DOUBLE) - 175.0, 7) AS gh,
                             c_clamp(CAST(id AS DOUBLE), 100.0, 9000.0) AS clamped,
                             json_path(concat('{"n": {"v": [0, ', CAST(id AS VARCHAR), ']}}'), '$.n.v[1]') AS jp
                      FROM scaled
                sinks:
                  out:
                    type: plugin
                    from: enriched
                    path: plugins/libsluice_examples.so
                    component: jsonl
                    options: {path: out.jsonl}
                """);
        assertEquals(0, sluice("validate", file.toString()).code());
        assertTrue(Files.notExists(dir.resolve("out.jsonl")), "validate must not create the plugin sink's file");
        long upcalls = PluginCounters.javaUdfUpcalls();
        Result result = run(file);
        assertEquals(0, result.code(), result.stderr());
        assertEquals(upcalls, PluginCounters.javaUdfUpcalls(), "native UDFs are called without entering the JVM");
        List<JsonNode> rows = rows(dir.resolve("out.jsonl"));
        assertEquals(5000, rows.size());
        Set<Long> ids = new HashSet<>();
        for (JsonNode row : rows) {
            long id = row.get("id").asLong();
            assertEquals(0, id % 3, "c_scale multiplied by 3");
            long original = id / 3;
            ids.add(original);
            String label = row.get("label").asText();
            assertEquals("SEQ-" + original, label);
            byte[] bytes = label.getBytes(StandardCharsets.UTF_8);
            assertEquals(
                    "0x" + HexFormat.of().formatHex(new Keccak.Digest256().digest(bytes)),
                    row.get("k").asText());
            assertEquals(HexFormat.of().formatHex(bytes), row.get("h").asText());
            assertEquals(Oracles.base58(bytes), row.get("b58").asText());
            assertEquals(
                    Oracles.geohash(id % 170 - 85.0, id % 350 - 175.0, 7),
                    row.get("gh").asText());
            assertEquals(Math.min(Math.max(id, 100), 9000), row.get("clamped").asDouble(), 0.0);
            assertEquals(String.valueOf(id), row.get("jp").asText());
        }
        assertEquals(5000, ids.size());
        assertTrue(ids.contains(0L) && ids.contains(4999L));
    }

    private String source(String path, String component, String options) {
        return """
                sources:
                  seq:
                    type: plugin
                    path: %s
                    component: %s
                    options: %s
                sinks:
                  out: {type: blackhole, from: seq}
                """.formatted(path, component, options);
    }

    private void assertValidateFails(String yaml, int line, String... fragments) throws IOException {
        Path file = write(yaml);
        Result result = sluice("validate", file.toString());
        assertEquals(Main.EXIT_CONFIG, result.code(), result.stderr());
        assertTrue(
                result.stderr().contains(file + ":" + line + ":"), "names the line " + line + ": " + result.stderr());
        for (String fragment : fragments) {
            assertTrue(result.stderr().contains(fragment), "'" + fragment + "' in: " + result.stderr());
        }
    }

    @Test
    void loadErrorsAreReportedByValidateAtTheirLine() throws IOException {
        assertValidateFails(source("plugins/missing.so", "sequence", "{}"), 4, "node 'seq'", "does not exist");
        Files.writeString(dir.resolve("plugins/text.so"), "not a library\n");
        assertValidateFails(source("plugins/text.so", "sequence", "{}"), 4, "node 'seq'", "not a shared library");
        Path libm = Oracles.systemSharedLibrary();
        Files.copy(libm, dir.resolve("plugins/libplain.so"));
        assertValidateFails(source("plugins/libplain.so", "sequence", "{}"), 4, "exports no sluice_plugin_entry");
        Oracles.compileC(dir.resolve("plugins/libabi99.so"), Oracles.ABI_99_PLUGIN);
        assertValidateFails(source("plugins/libabi99.so", "sequence", "{}"), 4, "plugin ABI 99.0", "rebuild it");
        assertValidateFails(source("plugins/" + RUST, "nope", "{}"), 5, "offers no source named 'nope'", "sequence");
        Path elsewhere = Files.createDirectories(dir.getParent().resolve(dir.getFileName() + "-elsewhere"));
        Files.copy(BUILT.resolve(RUST), elsewhere.resolve(RUST), StandardCopyOption.REPLACE_EXISTING);
        assertValidateFails(
                source("../" + elsewhere.getFileName() + "/" + RUST, "sequence", "{}"),
                4,
                "outside the directories",
                "plugins.allowed_dirs");
        assertValidateFails(source("plugins/" + RUST, "sequence", "{bogus: 1}"), 6, "bogus");
        assertValidateFails("""
                plugins:
                  udfs:
                    - path: plugins/%s
                      functions: [no_such_function]
                sources:
                  seq: {type: plugin, path: plugins/%s, component: sequence, options: {count: 1}}
                sinks:
                  out: {type: blackhole, from: seq}
                """.formatted(RUST, RUST), 3, "offers no scalar UDF named 'no_such_function'");
    }

    @Test
    void allowedDirsAdmitALibraryElsewhere() throws IOException {
        Path elsewhere = Files.createDirectories(dir.getParent().resolve(dir.getFileName() + "-libs"));
        Files.copy(BUILT.resolve(RUST), elsewhere.resolve(RUST), StandardCopyOption.REPLACE_EXISTING);
        Path file = write("plugins:\n  allowed_dirs: [" + elsewhere + "]\n"
                + source(elsewhere.resolve(RUST).toString(), "sequence", "{count: 10}"));
        Result result = sluice("validate", file.toString());
        assertEquals(0, result.code(), result.stderr());
    }

    @Test
    void aPluginErrorStatusFailsTheRunWithItsMessage() throws IOException {
        Result result =
                run(write(source("plugins/" + RUST, "sequence", "{count: 5000, rows_per_poll: 100, fail_at: 300}")));
        assertTrue(result.code() != 0, result.stderr());
        assertTrue(result.stderr().contains("failure requested at 300"), result.stderr());
    }

    @Test
    void aPanicInAPluginFailsTheRunAndTheJvmLives() throws IOException {
        Path file = write("""
                sources:
                  seq: {type: plugin, path: plugins/%s, component: sequence, options: {count: 100}}
                transforms:
                  upper:
                    type: plugin
                    from: seq
                    path: plugins/%s
                    component: uppercase
                    options: {columns: [label], panic_on: seq-42}
                sinks:
                  out: {type: blackhole, from: upper}
                """.formatted(RUST, RUST));
        for (int i = 0; i < 3; i++) {
            Result result = run(file);
            assertTrue(result.code() != 0, result.stderr());
            assertTrue(result.stderr().contains("seq-42"), result.stderr());
        }
    }

    @Test
    void badDataFromAPluginGoesToTheDeadLetter() throws IOException {
        Path file = write("""
                sources:
                  seq: {type: plugin, path: plugins/%s, component: sequence, options: {count: 100, rows_per_poll: 10}}
                transforms:
                  upper:
                    type: plugin
                    from: seq
                    path: plugins/%s
                    component: uppercase
                    options: {columns: [label], bad_data_on: seq-42}
                    on_error: dead_letter
                    dead_letter: rejected.jsonl
                sinks:
                  out: {type: file, from: upper, path: out.jsonl}
                """.formatted(RUST, RUST));
        Result result = run(file);
        assertEquals(0, result.code(), result.stderr());
        assertEquals(90, rows(dir.resolve("out.jsonl")).size(), "the batch holding the bad row is rejected");
        String rejected = Files.readString(dir.resolve("rejected.jsonl"));
        assertTrue(rejected.contains("seq-42"), rejected);
    }

    /**
     * A C transform that queues each batch as its output and then refuses the one holding id 42
     * with BAD_DATA: that batch goes to the dead letter only. Its queued copy was emitted too, so
     * its rows were both written and set aside.
     */
    @Test
    void aBatchRefusedAfterItWasQueuedIsNotEmitted() throws IOException {
        Path header = Path.of(System.getProperty("sluice.repo.root", ".."))
                .resolve("plugins-api/include/sluice_plugin.h")
                .toAbsolutePath()
                .normalize();
        Path library = dir.resolve("plugins/librefuser.so");
        Oracles.compileC(library, """
                #include <stdlib.h>
                #include <string.h>
                #include "%s"
                struct State { struct ArrowArray queued; int has; };
                static void release_child(struct ArrowSchema *s) { s->release = NULL; }
                static void release_root(struct ArrowSchema *s) {
                  for (int64_t i = 0; i < s->n_children; i++) { s->children[i]->release(s->children[i]); free(s->children[i]); }
                  free(s->children); s->release = NULL;
                }
                static struct ArrowSchema *child(const char *format, const char *name) {
                  struct ArrowSchema *c = calloc(1, sizeof *c);
                  *c = (struct ArrowSchema){.format = format, .name = name, .release = release_child};
                  return c;
                }
                static int32_t t_open(const char *o, const struct SluiceInstanceInfo *i, const struct ArrowSchema *in,
                                      void **state, struct ArrowSchema *out, char **error) {
                  struct ArrowSchema **children = malloc(2 * sizeof *children);
                  children[0] = child("l", "id"); children[1] = child("u", "label");
                  *out = (struct ArrowSchema){.format = "+s", .name = "", .n_children = 2, .children = children,
                                              .release = release_root};
                  *state = calloc(1, sizeof(struct State));
                  return SLUICE_PLUGIN_OK;
                }
                static int32_t t_process(void *state, struct ArrowArray *batch, char **error) {
                  struct State *s = state;
                  const int64_t *ids = (const int64_t *)batch->children[0]->buffers[1];
                  int bad = 0;
                  for (int64_t r = 0; r < batch->length; r++) bad |= ids[batch->children[0]->offset + batch->offset + r] == 42;
                  s->queued = *batch; s->has = 1; batch->release = NULL; /* moved into the queue */
                  if (bad) { *error = strdup("refuser: id 42 is bad"); return SLUICE_PLUGIN_BAD_DATA; }
                  return SLUICE_PLUGIN_OK;
                }
                static int32_t t_next(void *state, int32_t *has, struct ArrowArray *out, char **error) {
                  struct State *s = state;
                  *has = s->has;
                  if (s->has) { *out = s->queued; s->has = 0; }
                  return SLUICE_PLUGIN_OK;
                }
                static void t_close(void *state) {
                  struct State *s = state;
                  if (s->has && s->queued.release) s->queued.release(&s->queued);
                  free(s);
                }
                static const struct SluiceTransform VT = {t_open, t_process, t_next, NULL, t_close};
                static const struct SluiceComponent C[] = {{SLUICE_COMPONENT_TRANSFORM, "refuser", NULL, NULL, &VT}};
                static void free_string(char *t) { free(t); }
                static void free_bytes(uint8_t *b, size_t n) { free(b); }
                static const struct SluicePlugin P = {SLUICE_PLUGIN_ABI_MAJOR, SLUICE_PLUGIN_ABI_MINOR, "refuser", "1",
                                                      1, C, free_string, free_bytes};
                const struct SluicePlugin *sluice_plugin_entry(void) { return &P; }
                """.formatted(header));
        Path file = write("""
                sources:
                  seq: {type: plugin, path: plugins/%s, component: sequence, options: {count: 100, rows_per_poll: 10}}
                transforms:
                  refused:
                    type: plugin
                    from: seq
                    path: plugins/librefuser.so
                    component: refuser
                    on_error: dead_letter
                    dead_letter: rejected.jsonl
                sinks:
                  out: {type: file, from: refused, path: out.jsonl}
                """.formatted(RUST));
        Result result = run(file);
        assertEquals(0, result.code(), result.stderr());
        List<Long> ids = rows(dir.resolve("out.jsonl")).stream()
                .map(row -> row.get("id").asLong())
                .toList();
        assertEquals(90, ids.size(), "the refused batch is not emitted: " + ids);
        assertTrue(!ids.contains(42L), ids.toString());
        assertTrue(Files.readString(dir.resolve("rejected.jsonl")).contains("refuser: id 42 is bad"));
    }

    @Test
    void aSideOutputObservesEveryBatchOfItsNode() throws IOException {
        Path file = write("""
                checkpoint: {interval: 100ms}
                sources:
                  seq: {type: plugin, path: plugins/libsluice_examples.so, component: sequence, options: {count: 3000, rows_per_poll: 10, delay_ms: 5}}
                transforms:
                  even: {type: sql, sql: "SELECT id, label FROM seq WHERE id % 2 = 0"}
                sinks:
                  out: {type: file, from: even, path: out.jsonl}
                  audit: {type: plugin, from: even, path: plugins/libsluice_examples.so, component: audit, options: {path: audit.jsonl}}
                """);
        assertEquals(0, sluice("validate", file.toString()).code());
        assertTrue(Files.notExists(dir.resolve("audit.jsonl")), "validate must not create the side output's file");
        Result result = run(file);
        assertEquals(0, result.code(), result.stderr());
        List<JsonNode> audit = rows(dir.resolve("audit.jsonl"));
        assertTrue(audit.size() >= 2, "one line per barrier: " + audit);
        long sum = 0;
        for (JsonNode line : audit) {
            assertEquals("even", line.get("node").asText());
            sum += line.get("rows").asLong();
        }
        assertEquals(1500, sum);
        assertEquals(1500, audit.get(audit.size() - 1).get("total").asLong());
        assertEquals(1500, rows(dir.resolve("out.jsonl")).size());
    }

    @Test
    void aPreprocessorRewritesThePipelineBeforeItIsChecked() throws IOException {
        Path file = write("""
                plugins:
                  preprocessors:
                    - path: plugins/libsluice_examples.so
                      component: template
                      options: {vars: {LIMIT: 40, COMPONENT: sequence}}
                sources:
                  seq: {type: plugin, path: plugins/libsluice_examples.so, component: "{{COMPONENT}}", options: {count: 100}}
                transforms:
                  few: {type: sql, sql: "SELECT id FROM seq WHERE id < {{LIMIT}}"}
                sinks:
                  out: {type: file, from: few, path: out.jsonl}
                """);
        Result result = run(file);
        assertEquals(0, result.code(), result.stderr());
        assertEquals(40, rows(dir.resolve("out.jsonl")).size());
        Files.writeString(file, Files.readString(file).replace("{{LIMIT}}", "{{NO_SUCH_VAR}}"));
        Result unknown = sluice("validate", file.toString());
        assertEquals(Main.EXIT_CONFIG, unknown.code(), unknown.stderr());
        assertTrue(unknown.stderr().contains(file + ":3:"), "names the preprocessor's entry: " + unknown.stderr());
        assertTrue(unknown.stderr().contains("NO_SUCH_VAR"), unknown.stderr());
    }

    /**
     * 100 000 batches through a plugin source, two plugin transforms, SQL with plugin UDFs and a
     * plugin sink leave no native handle behind, an empty Arrow allocator (the run checks it at
     * close) and a process heap (glibc's bytes in use) that does not grow with the number of
     * batches: 20 000 batches first, then 100 000 twice, and one of the two may add at most 2 MB
     * (a leak of 20 bytes a batch would add that much to both). Glibc's count includes the JVM's
     * own mallocs (JIT compilations, GC structures), which can add a few MB once in a run; a leak
     * adds it in every run.
     */
    @Test
    void hundredThousandPluginBatchesLeakNothing() throws IOException {
        String yaml = """
                plugins:
                  udfs: [{path: plugins/libsluice_examples.so, functions: [hex_encode]}, {path: plugins/libsluice_c_example.so}]
                sources:
                  seq: {type: plugin, path: plugins/libsluice_examples.so, component: sequence, options: {count: %d, rows_per_poll: 1}}
                transforms:
                  upper: {type: plugin, from: seq, path: plugins/libsluice_examples.so, component: uppercase, options: {columns: [label]}}
                  scaled: {type: plugin, from: upper, path: plugins/libsluice_c_example.so, component: c_scale, options: {column: id, factor: 2}}
                  coded: {type: sql, sql: "SELECT id, hex_encode(CAST(label AS BYTEA)) AS h, c_clamp(CAST(id AS DOUBLE), 0.0, 10.0) AS c FROM scaled"}
                sinks:
                  out: {type: plugin, from: coded, path: plugins/libsluice_examples.so, component: jsonl, options: {path: out.jsonl}}
                """;
        long handles = dev.sluice.bridge.NativeCore.bridge().liveHandles();
        // Separate state DBs: the second run must not resume from where the first one ended.
        Result warm = sluice(
                "run",
                write(yaml.formatted(20_000)).toString(),
                "--state-dir",
                dir.resolve("s1").toString());
        assertEquals(0, warm.code(), warm.stderr());
        // A leak of even 20 bytes a batch grows the heap by 2 MB in every run; other threads of
        // a busy JVM (JIT, GC, allocator caches) can grow it in any one run. So a leak is a run of
        // three that all grew, and the test stops at the first run that did not.
        List<Long> growth = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            long before = Oracles.mallocInUse();
            Result result = sluice(
                    "run",
                    write(yaml.formatted(100_000)).toString(),
                    "--state-dir",
                    dir.resolve("s" + (run + 2)).toString());
            assertEquals(0, result.code(), result.stderr());
            growth.add(Oracles.mallocInUse() - before);
            assertEquals(100_000, Files.readAllLines(dir.resolve("out.jsonl")).size());
            assertEquals(handles, dev.sluice.bridge.NativeCore.bridge().liveHandles(), "native handles left behind");
            if (growth.get(run) < 2_000_000) {
                return;
            }
        }
        fail("the heap grew by " + growth + " bytes over three runs of 100 000 batches");
    }

    @Test
    void inspectListsComponentsAndTheirOptions() throws IOException {
        PrintStream original = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = Main.execute("plugin", "inspect", dir.resolve("plugins/" + C).toString());
        } finally {
            System.setOut(original);
        }
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, text);
        assertTrue(text.contains("ABI:  1.0"), text);
        assertTrue(text.contains("scalar UDF c_clamp"), text);
        assertTrue(text.contains("transform c_scale"), text);
        Result missing =
                sluice("plugin", "inspect", dir.resolve("plugins/none.so").toString());
        assertEquals(2, missing.code());
        assertTrue(missing.stderr().contains("does not exist"), missing.stderr());
    }

    /** Independent implementations of what the example UDFs compute. */
    static final class Oracles {

        private static final String BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
        private static final String BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz";

        static String base58(byte[] bytes) {
            StringBuilder out = new StringBuilder();
            BigInteger n = new BigInteger(1, bytes);
            BigInteger base = BigInteger.valueOf(58);
            while (n.signum() > 0) {
                BigInteger[] qr = n.divideAndRemainder(base);
                out.append(BASE58.charAt(qr[1].intValue()));
                n = qr[0];
            }
            for (int i = 0; i < bytes.length && bytes[i] == 0; i++) {
                out.append('1');
            }
            return out.reverse().toString();
        }

        static String geohash(double lat, double lon, int precision) {
            double[] latRange = {-90, 90};
            double[] lonRange = {-180, 180};
            StringBuilder out = new StringBuilder();
            boolean even = true;
            int bit = 0;
            int ch = 0;
            while (out.length() < precision) {
                double[] range = even ? lonRange : latRange;
                double value = even ? lon : lat;
                double mid = (range[0] + range[1]) / 2;
                ch <<= 1;
                if (value >= mid) {
                    ch |= 1;
                    range[0] = mid;
                } else {
                    range[1] = mid;
                }
                even = !even;
                if (++bit == 5) {
                    out.append(BASE32.charAt(ch));
                    bit = 0;
                    ch = 0;
                }
            }
            return out.toString();
        }

        private static final java.lang.invoke.MethodHandle MALLINFO2 = java.lang.foreign.Linker.nativeLinker()
                .downcallHandle(
                        java.lang.foreign.Linker.nativeLinker()
                                .defaultLookup()
                                .find("mallinfo2")
                                .orElseThrow(),
                        java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.MemoryLayout.structLayout(
                                java.lang.foreign.MemoryLayout.sequenceLayout(
                                        10, java.lang.foreign.ValueLayout.JAVA_LONG))));

        /** glibc's bytes in use by malloc (mallinfo2), after a GC so Java's direct buffers are gone. */
        static long mallocInUse() {
            System.gc();
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
                java.lang.foreign.MemorySegment info = (java.lang.foreign.MemorySegment)
                        MALLINFO2.invokeExact((java.lang.foreign.SegmentAllocator) arena);
                // uordblks (bytes in use from the heap) + hblkhd (bytes in mmap'ed chunks)
                return info.getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, 7)
                        + info.getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, 4);
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            }
        }

        /** A shared library of the system that is no plugin. */
        static Path systemSharedLibrary() {
            for (String candidate : List.of(
                    "/lib/x86_64-linux-gnu/libm.so.6",
                    "/usr/lib/x86_64-linux-gnu/libm.so.6",
                    "/lib/aarch64-linux-gnu/libm.so.6",
                    "/usr/lib64/libm.so.6")) {
                if (Files.exists(Path.of(candidate))) {
                    return Path.of(candidate);
                }
            }
            throw new IllegalStateException("no libm.so.6 found");
        }

        /** A plugin that says it speaks ABI 99. */
        static final String ABI_99_PLUGIN = """
                #include <stddef.h>
                #include <stdint.h>
                struct SluicePlugin { int32_t abi_major, abi_minor; const char *name, *version;
                    int64_t n_components; const void *components; void (*free_string)(char *);
                    void (*free_bytes)(uint8_t *, size_t); };
                static const struct SluicePlugin D = {99, 0, "future", "9.9", 0, NULL, NULL, NULL};
                const struct SluicePlugin *sluice_plugin_entry(void) { return &D; }
                """;

        static void compileC(Path output, String source) throws IOException {
            Path c = output.resolveSibling(output.getFileName() + ".c");
            Files.writeString(c, source);
            Process cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o", output.toString(), c.toString())
                    .redirectErrorStream(true)
                    .start();
            try {
                String log = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, cc.waitFor(), log);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
    }
}
