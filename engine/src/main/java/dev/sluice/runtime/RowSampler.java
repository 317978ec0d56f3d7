package dev.sluice.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.observe.RowSamples;
import dev.sluice.plugin.Batch;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Takes the inspector's rows from the batches a node emits: when its {@link RowSamples} has a
 * take due, the first few rows of the batch are encoded as JSON in the core (the batch is not
 * imported into Java) and the mask columns replaced by {@code ****}. A failure here is recorded
 * as the sample, never the run's: inspection must not change what a pipeline does.
 */
public final class RowSampler {

    static final String MASKED = "****";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Set<String> maskColumns;
    private final BufferAllocator allocator;

    public RowSampler(Set<String> maskColumns, BufferAllocator allocator) {
        this.maskColumns = maskColumns;
        this.allocator = allocator;
    }

    /** Samples {@code batch} (of {@code rows} rows) into {@code samples} if a take is due. */
    public void offer(RowSamples samples, Batch batch, long rows) {
        if (rows == 0) {
            return;
        }
        int wanted = samples.reserve(System.nanoTime());
        if (wanted == 0) {
            return;
        }
        List<String> taken = new ArrayList<>(wanted);
        try {
            NativeEncoder encoder =
                    new NativeEncoder("json", false, true, List.of(), List.of(), Map.of("max_rows", wanted));
            NativeBatch.with(
                    batch,
                    allocator,
                    nativeBatch -> encoder.encodeRecords(nativeBatch, records -> {
                        for (int i = 0; i < records.count(); i++) {
                            byte[] bytes = records.data()
                                    .asSlice(records.start(i), records.length(i))
                                    .toArray(ValueLayout.JAVA_BYTE);
                            taken.add(mask(new String(bytes, StandardCharsets.UTF_8)));
                        }
                    }));
        } catch (RuntimeException e) {
            taken.clear();
            taken.add(JSON.createObjectNode()
                    .put("_inspect_error", "could not sample this batch: " + e.getMessage())
                    .toString());
        }
        samples.add(taken, System.currentTimeMillis());
    }

    private String mask(String row) {
        if (maskColumns.isEmpty()) {
            return row;
        }
        try {
            JsonNode tree = JSON.readTree(row);
            maskIn(tree);
            return tree.toString();
        } catch (JsonProcessingException e) {
            // The core wrote it, so this does not happen; if it did, show nothing rather than a secret.
            return JSON.createObjectNode()
                    .put("_inspect_error", "unreadable row")
                    .toString();
        }
    }

    /** Masks the mask columns at every depth: a secret inside a struct is still a secret. */
    private void maskIn(JsonNode node) {
        if (node instanceof ObjectNode object) {
            for (var field : object.properties()) {
                if (maskColumns.contains(field.getKey())) {
                    field.setValue(JSON.getNodeFactory().textNode(MASKED));
                } else {
                    maskIn(field.getValue());
                }
            }
        } else if (node.isArray()) {
            node.forEach(this::maskIn);
        }
    }
}
