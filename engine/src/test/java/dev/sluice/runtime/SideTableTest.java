package dev.sluice.runtime;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.bridge.NativeCore;
import dev.sluice.cli.InProcessCli.Result;
import dev.sluice.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Static side tables of the {@code sql} transform, through the CLI: a Nexmark q13-style lookup
 * join end to end, and the configuration errors, each at its line and naming node and file.
 */
class SideTableTest {

    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }

    /** Nexmark's side input: key 0..9999, value "value-<key>", no header. */
    private void sideInput() throws IOException {
        write(
                "side_input.csv",
                IntStream.range(0, 10_000)
                        .mapToObj(k -> k + ",value-" + k)
                        .collect(Collectors.joining("\n", "", "\n")));
    }

    @Test
    void everyBidIsJoinedWithItsSideTableRow() throws IOException {
        sideInput();
        // Small batches and checkpoints: a join that held rows back would lose or reorder them
        // across barriers; every bid must come out exactly once, with its own value.
        Path pipeline = write("q13.yaml", """
                name: q13
                checkpoint: {interval: 10ms}
                sources:
                  bid: {type: generator, entity: bid, count: 5000, batch_size: 97}
                transforms:
                  joined:
                    type: sql
                    sql: >-
                      SELECT B.auction, B.bidder, B.price, S.value
                      FROM bid B JOIN side_input S ON B.auction % 10000 = S.key
                    tables:
                      side_input:
                        path: side_input.csv
                        header: false
                        schema: {key: bigint, value: string}
                sinks:
                  out: {type: file, from: joined, path: out/joined.jsonl}
                """);
        Result run = sluice(
                "run", pipeline.toString(), "--state-dir", dir.resolve("state").toString());
        assertEquals(0, run.code(), run.stderr());
        List<String> lines = Files.readAllLines(dir.resolve("out/joined.jsonl"));
        assertEquals(4600, lines.size(), "46 of every 50 generated events are bids, each matches one key");
        Map<Long, Integer> perAuction = new HashMap<>();
        for (String line : lines) {
            JsonNode row = JSON.readTree(line);
            long auction = row.get("auction").asLong();
            assertEquals("value-" + (auction % 10_000), row.get("value").asText(), line);
            perAuction.merge(auction, 1, Integer::sum);
        }
        assertTrue(perAuction.size() > 1, "several auctions");
        assertEquals(0, NativeCore.bridge().liveHandles(), "every native handle freed after the run");
    }

    @Test
    void sideTableSettingsAreCheckedAtTheirLines() throws IOException {
        sideInput();
        Path pipeline = write("bad.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT B.auction, S.value FROM bid B JOIN side_input S ON B.auction = S.key
                    tables:
                      side_input:
                        path: side_input.csv
                        hedaer: false
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result result = sluice("validate", pipeline.toString());
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertTrue(
                result.stderr().contains("bad.yaml:10:9: node 't': unknown key 'hedaer' for 'tables.side_input'")
                        && result.stderr().contains("did you mean 'header'"),
                result.stderr());
    }

    @Test
    void aMissingFileOrABadSchemaNamesTheNodeTheTableAndTheFile() throws IOException {
        Path missing = write("missing.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT B.auction, S.value FROM bid B JOIN side_input S ON B.auction = S.key
                    tables:
                      side_input: {path: nowhere.csv, header: false}
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result result = sluice("validate", missing.toString());
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertTrue(
                result.stderr().contains("missing.yaml:8:")
                        && result.stderr().contains("node 't': side table 'side_input': the file ")
                        && result.stderr().contains("nowhere.csv does not exist"),
                result.stderr());

        sideInput();
        Path badType = write("type.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT B.auction, S.value FROM bid B JOIN side_input S ON B.auction = S.key
                    tables:
                      side_input:
                        path: side_input.csv
                        schema: {key: bigint, value: strnig}
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result type = sluice("validate", badType.toString());
        assertEquals(Main.EXIT_CONFIG, type.code());
        assertTrue(
                type.stderr().contains("type.yaml:10:")
                        && type.stderr().contains("side table 'side_input' (")
                        && type.stderr().contains("side_input.csv): column 'value': unknown type 'strnig'"),
                type.stderr());
    }

    @Test
    void aLineThatDoesNotDecodeFailsThePlanWithTheFileAndLine() throws IOException {
        write("rates.csv", "currency,rate\nEUR,1.08\nGBP,not-a-number\n");
        Path pipeline = write("rates.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT B.price * R.rate AS converted FROM bid B JOIN rates R ON B.channel = R.currency
                    tables:
                      rates: {path: rates.csv, schema: {currency: string, rate: double}}
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result result = sluice("validate", pipeline.toString());
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertTrue(
                result.stderr().contains("rates.yaml:7:")
                        && result.stderr().contains("node 't': side table 'rates' (")
                        && result.stderr().contains("rates.csv): line 3"),
                result.stderr());
    }

    @Test
    void joiningTheStreamInAWayThatWouldHoldRowsIsRefused() throws IOException {
        sideInput();
        Path pipeline = write("full.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT S.key, B.price FROM side_input S LEFT JOIN bid B ON B.auction = S.key
                    tables:
                      side_input: {path: side_input.csv, header: false, schema: {key: bigint, value: string}}
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result result = sluice("validate", pipeline.toString());
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertTrue(
                result.stderr().contains("full.yaml:6:") && result.stderr().contains("stateful SQL is not supported"),
                result.stderr());
    }
}
