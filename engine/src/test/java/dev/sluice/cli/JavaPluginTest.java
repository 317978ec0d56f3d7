package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.pluginhost.PluginCounters;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Java plugins from a JAR path, compiled here from source so that nothing of them is on the
 * engine's class path: a {@code ScalarFunction} pair called from SQL through FFM upcalls, and a
 * Java source stage type under {@code plugins.jars}.
 */
class JavaPluginTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static final String REVERSE = """
            package example;
            import dev.sluice.plugin.ScalarFunction;
            import java.util.List;
            import org.apache.arrow.memory.BufferAllocator;
            import org.apache.arrow.vector.*;
            import org.apache.arrow.vector.types.pojo.ArrowType;
            public final class Reverse implements ScalarFunction {
                public int spiVersion() { return SPI_VERSION; }
                public String name() { return "reverse_text"; }
                public List<ArrowType> argumentTypes() { return List.of(ArrowType.Utf8.INSTANCE); }
                public ArrowType returnType() { return ArrowType.Utf8.INSTANCE; }
                public FieldVector invoke(List<FieldVector> args, int rows, BufferAllocator allocator) {
                    VarCharVector in = (VarCharVector) args.get(0);
                    VarCharVector out = new VarCharVector("r", allocator);
                    out.allocateNew(rows);
                    for (int i = 0; i < rows; i++) {
                        if (in.isNull(i)) { out.setNull(i); continue; }
                        String s = new String(in.get(i), java.nio.charset.StandardCharsets.UTF_8);
                        if (s.equals("boom")) throw new IllegalArgumentException("cannot reverse boom");
                        out.setSafe(i, new StringBuilder(s).reverse().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    }
                    out.setValueCount(rows);
                    return out;
                }
            }
            """;

    private static final String TIMES_TWO = """
            package example;
            import dev.sluice.plugin.ScalarFunction;
            import java.util.List;
            import org.apache.arrow.memory.BufferAllocator;
            import org.apache.arrow.vector.*;
            import org.apache.arrow.vector.types.pojo.ArrowType;
            public final class TimesTwo implements ScalarFunction {
                public int spiVersion() { return SPI_VERSION; }
                public String name() { return "times_two"; }
                public List<ArrowType> argumentTypes() { return List.of(new ArrowType.Int(64, true)); }
                public ArrowType returnType() { return new ArrowType.Int(64, true); }
                public FieldVector invoke(List<FieldVector> args, int rows, BufferAllocator allocator) {
                    BigIntVector in = (BigIntVector) args.get(0);
                    BigIntVector out = new BigIntVector("t", allocator);
                    out.allocateNew(rows);
                    for (int i = 0; i < rows; i++) {
                        if (in.isNull(i)) out.setNull(i); else out.set(i, in.get(i) * 2);
                    }
                    out.setValueCount(rows);
                    return out;
                }
            }
            """;

    /** A Java source stage type: numbers 0..count-1 with a label, in batches of 100. */
    private static final String COUNTER = """
            package example;
            import dev.sluice.plugin.*;
            import dev.sluice.plugin.config.*;
            import java.util.List;
            import org.apache.arrow.vector.*;
            import org.apache.arrow.vector.types.pojo.*;
            public final class Counter implements Source {
                public static final class Type extends AbstractStageType {
                    public Type() {
                        super(NodeKind.SOURCE, "java_counter", "Counts.",
                              new ConfigDef().define("count", ConfigType.LONG, null, true, "How many."));
                    }
                    public int spiVersion() { return SPI_VERSION; }
                    public Counter create(Settings settings) { return new Counter(settings.getLong("count")); }
                }
                private final long count;
                private long next;
                private StageContext context;
                private VectorSchemaRoot root;
                Counter(long count) { this.count = count; }
                public Schema open(StageContext context) {
                    this.context = context;
                    Schema schema = new Schema(List.of(
                            Field.notNullable("n", new ArrowType.Int(64, true)),
                            Field.notNullable("label", ArrowType.Utf8.INSTANCE)));
                    root = VectorSchemaRoot.create(schema, context.allocator());
                    return schema;
                }
                public Poll poll(Emitter out) {
                    if (next >= count) return Poll.END;
                    int rows = (int) Math.min(100, count - next);
                    root.allocateNew();
                    BigIntVector n = (BigIntVector) root.getVector("n");
                    VarCharVector label = (VarCharVector) root.getVector("label");
                    for (int i = 0; i < rows; i++) {
                        n.setSafe(i, next + i);
                        label.setSafe(i, ("row" + (next + i)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    }
                    root.setRowCount(rows);
                    next += rows;
                    out.emit(context.batchOf(root));
                    return Poll.EMITTED;
                }
                public void close() { if (root != null) root.close(); }
            }
            """;

    private Path jar(String name, List<String> sources, String service, String... implementations) throws IOException {
        Path src = Files.createDirectories(dir.resolve("src-" + name + "/example"));
        List<String> files = new ArrayList<>();
        for (String source : sources) {
            String className =
                    source.substring(source.indexOf("public final class ") + 19).split(" ")[0];
            Path file = src.resolve(className + ".java");
            Files.writeString(file, source);
            files.add(file.toString());
        }
        Path classes = Files.createDirectories(dir.resolve("classes-" + name));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(
                List.of("-d", classes.toString(), "-cp", System.getProperty("java.class.path"), "--release", "22"));
        args.addAll(files);
        assertEquals(0, javac.run(null, null, null, args.toArray(String[]::new)), "the example plugin compiles");
        Path jar = Files.createDirectories(dir.resolve("plugins")).resolve(name + ".jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
                Stream<Path> walk = Files.walk(classes)) {
            for (Path file : walk.filter(Files::isRegularFile).toList()) {
                out.putNextEntry(
                        new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
                out.write(Files.readAllBytes(file));
                out.closeEntry();
            }
            out.putNextEntry(new JarEntry("META-INF/services/" + service));
            OutputStream body = out;
            body.write((String.join("\n", implementations) + "\n").getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        }
        return jar;
    }

    @Test
    void javaUdfsAndAJavaSourceFromJarsRunInSql() throws IOException {
        jar(
                "udfs",
                List.of(REVERSE, TIMES_TWO),
                "dev.sluice.plugin.ScalarFunction",
                "example.Reverse",
                "example.TimesTwo");
        jar("counter", List.of(COUNTER), "dev.sluice.plugin.StageType", "example.Counter$Type");
        Path file = dir.resolve("p.yaml");
        Files.writeString(file, """
                plugins:
                  jars: [plugins/counter.jar]
                  udfs:
                    - jar: plugins/udfs.jar
                sources:
                  nums: {type: java_counter, count: 1000}
                transforms:
                  t:
                    type: sql
                    sql: SELECT n, times_two(n) AS doubled, reverse_text(label) AS reversed FROM nums WHERE n % 2 = 0
                sinks:
                  out: {type: file, from: t, path: out.jsonl}
                """);
        long before = PluginCounters.javaUdfUpcalls();
        long exports = dev.sluice.bridge.DirectExport.liveExports();
        InProcessCli.Result result = InProcessCli.sluice(
                "run", file.toString(), "--state-dir", dir.resolve("state").toString());
        assertEquals(0, result.code(), result.stderr());
        long upcalls = PluginCounters.javaUdfUpcalls() - before;
        assertEquals(
                exports, dev.sluice.bridge.DirectExport.liveExports(), "every UDF result the core took was released");
        // Two functions, ten batches of 100 rows: one upcall per function and batch.
        assertTrue(upcalls >= 20 && upcalls <= 40, "upcalls: " + upcalls);
        List<String> lines = Files.readAllLines(dir.resolve("out.jsonl"));
        assertEquals(500, lines.size());
        for (String line : lines) {
            JsonNode row = JSON.readTree(line);
            long n = row.get("n").asLong();
            assertEquals(2 * n, row.get("doubled").asLong());
            assertEquals(
                    new StringBuilder("row" + n).reverse().toString(),
                    row.get("reversed").asText());
        }
    }

    @Test
    void anExceptionInAJavaUdfFailsTheRunWithItsMessage() throws IOException {
        jar(
                "udfs",
                List.of(REVERSE, TIMES_TWO),
                "dev.sluice.plugin.ScalarFunction",
                "example.Reverse",
                "example.TimesTwo");
        Files.writeString(dir.resolve("in.jsonl"), "{\"s\": \"ok\"}\n{\"s\": \"boom\"}\n");
        Path file = dir.resolve("p.yaml");
        Files.writeString(file, """
                plugins:
                  udfs: [{jar: plugins/udfs.jar, functions: [reverse_text]}]
                sources:
                  in: {type: file, path: in.jsonl, schema: {s: string}}
                transforms:
                  t: {type: sql, sql: SELECT reverse_text(s) AS r FROM in}
                sinks:
                  out: {type: blackhole, from: t}
                """);
        InProcessCli.Result result = InProcessCli.sluice(
                "run", file.toString(), "--state-dir", dir.resolve("state").toString());
        assertTrue(result.code() != 0, result.stderr());
        assertTrue(result.stderr().contains("cannot reverse boom"), result.stderr());
    }

    @Test
    void wrongArgumentTypesOfAJavaUdfFailValidate() throws IOException {
        jar(
                "udfs",
                List.of(REVERSE, TIMES_TWO),
                "dev.sluice.plugin.ScalarFunction",
                "example.Reverse",
                "example.TimesTwo");
        Path file = dir.resolve("p.yaml");
        Files.writeString(file, """
                plugins:
                  udfs: [{jar: plugins/udfs.jar}]
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t: {type: sql, sql: "SELECT times_two(channel, channel) AS x FROM bid"}
                sinks:
                  out: {type: blackhole, from: t}
                """);
        InProcessCli.Result result = InProcessCli.sluice("validate", file.toString());
        assertEquals(Main.EXIT_CONFIG, result.code(), result.stderr());
        assertTrue(result.stderr().contains("times_two"), result.stderr());
    }
}
