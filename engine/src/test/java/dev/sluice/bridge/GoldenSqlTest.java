package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Golden SQL tests: each {@code golden/*.sql} names its inputs (JSON-lines files under
 * {@code golden/data/}, read by the core with an inferred schema), holds one query, and lists
 * the expected output rows as JSON lines after {@code -- expected}. Every input batch is pushed
 * through the plan and the output encoded by the core, as a pipeline would.
 */
class GoldenSqlTest {

    private BufferAllocator allocator;
    private long handlesBefore;

    @BeforeEach
    void setUp() {
        allocator = ArrowC.rootAllocator().newChildAllocator("golden", 0, Long.MAX_VALUE);
        handlesBefore = NativeTestSupport.liveHandles();
    }

    @AfterEach
    void tearDown() {
        NativeTestSupport.assertNoLeaks(handlesBefore, allocator);
        allocator.close();
    }

    @TestFactory
    Stream<DynamicTest> goldenQueries() throws IOException, URISyntaxException {
        Path dir = Path.of(GoldenSqlTest.class.getResource("/golden").toURI());
        List<Path> cases;
        try (Stream<Path> files = Files.list(dir)) {
            cases = files.filter(p -> p.toString().endsWith(".sql")).sorted().toList();
        }
        if (cases.isEmpty()) {
            throw new IllegalStateException("no golden cases in " + dir);
        }
        return cases.stream().map(c -> DynamicTest.dynamicTest(c.getFileName().toString(), () -> run(dir, c)));
    }

    private void run(Path dir, Path caseFile) throws IOException {
        GoldenCase golden = GoldenCase.parse(Files.readString(caseFile));
        List<NativeFileReader> readers = new ArrayList<>();
        try {
            List<Schema> schemas = new ArrayList<>();
            for (String input : golden.inputs) {
                NativeFileReader reader = NativeFileReader.open(
                        allocator,
                        Map.of(
                                "path",
                                dir.resolve("data").resolve(input + ".jsonl").toString(),
                                "format",
                                "json",
                                "batch_size",
                                2),
                        null);
                readers.add(reader);
                schemas.add(reader.schema());
            }
            List<String> actual = new ArrayList<>();
            NativeEncoder encoder = new NativeEncoder("json", false);
            try (NativeTransform plan = NativeTransform.plan(allocator, golden.sql, golden.inputs, schemas)) {
                for (int i = 0; i < readers.size(); i++) {
                    for (NativeFileReader.Read read = readers.get(i).next();
                            read != null;
                            read = readers.get(i).next()) {
                        try (NativeBatch batch = read.batch();
                                NativeBatch errors = read.errors()) {
                            plan.push(i, batch);
                        }
                        for (NativeBatch out = plan.drain(); out != null; out = plan.drain()) {
                            try (NativeBatch owned = out) {
                                encoder.encode(
                                        out,
                                        bytes -> actual.addAll(
                                                new String(bytes.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8)
                                                        .lines()
                                                        .toList()));
                            }
                        }
                    }
                }
            }
            assertEquals(
                    String.join("\n", golden.expected),
                    String.join("\n", actual),
                    caseFile.getFileName() + ": " + golden.sql);
        } finally {
            readers.forEach(NativeFileReader::close);
        }
    }

    /** One case file: {@code -- inputs: a, b}, the SQL, {@code -- expected}, JSON lines. */
    private record GoldenCase(List<String> inputs, String sql, List<String> expected) {
        static GoldenCase parse(String text) {
            List<String> inputs = null;
            StringBuilder sql = new StringBuilder();
            List<String> expected = new ArrayList<>();
            boolean inExpected = false;
            for (String line : text.lines().toList()) {
                if (line.startsWith("-- inputs:")) {
                    inputs =
                            List.of(line.substring("-- inputs:".length()).trim().split("\\s*,\\s*"));
                } else if (line.trim().equals("-- expected")) {
                    inExpected = true;
                } else if (inExpected) {
                    if (!line.isBlank()) {
                        expected.add(line.trim());
                    }
                } else if (!line.startsWith("--")) {
                    sql.append(line).append('\n');
                }
            }
            if (inputs == null || !inExpected) {
                throw new IllegalArgumentException("a golden case needs '-- inputs:' and '-- expected'");
            }
            return new GoldenCase(inputs, sql.toString().trim(), expected);
        }
    }
}
