package dev.sluice.connector.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

class RecordSlabTest {

    private static ConsumerRecord<byte[], ByteBuffer> record(long offset, String key, String value) {
        return new ConsumerRecord<>(
                "t",
                0,
                offset,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                ByteBuffer.wrap(value.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aSmallBatchAfterALargeOneSeesNoneOfItsKeys() {
        try (RecordSlab slab = new RecordSlab(16)) {
            for (int i = 0; i < 100; i++) { // grows past its first capacity
                slab.add(record(i, "k" + i, "v" + i));
            }
            slab.clear();
            slab.add(record(100, null, "last"));
            assertEquals(1, slab.count());
            assertNull(slab.key(0));
            for (int i = 1; i < 100; i++) {
                assertNull(slab.key(i), "slot " + i + " still holds a key of the cleared batch");
                assertNull(slab.headers(i), "slot " + i + " still holds headers of the cleared batch");
            }
            assertEquals(100, slab.offset(0));
            byte[] value = new byte[4];
            java.lang.foreign.MemorySegment.copy(slab.data(), java.lang.foreign.ValueLayout.JAVA_BYTE, 0, value, 0, 4);
            assertArrayEquals("last".getBytes(StandardCharsets.UTF_8), value);
        }
    }

    /** Header values as their text, or as hex when they are not UTF-8 (never U+FFFD). */
    @Test
    void headersAreTheirTextOrTheirBytesInHex() throws Exception {
        var headers = new org.apache.kafka.common.header.internals.RecordHeaders();
        headers.add("trace", new byte[] {0x0a, (byte) 0xff, 0x00});
        headers.add("name", "h\u00e9 \"q\"".getBytes(StandardCharsets.UTF_8));
        headers.add("none", null);
        headers.add("name", "last".getBytes(StandardCharsets.UTF_8));
        assertEquals(
                "{\"trace\":{\"hex\":\"0aff00\"},\"name\":\"last\",\"none\":null}",
                new String(MetadataColumns.headersJson(headers), StandardCharsets.UTF_8));
        headers.add("name", "h\u00e9 \"q\" \ud83d\ude00".getBytes(StandardCharsets.UTF_8));
        var parsed = new com.fasterxml.jackson.databind.ObjectMapper().readTree(MetadataColumns.headersJson(headers));
        assertEquals("h\u00e9 \"q\" \ud83d\ude00", parsed.get("name").asText());
    }
}
