package dev.sluice.connector.kafka;

import java.nio.ByteBuffer;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Hands the source each record's value as the consumer's own view of it instead of a fresh
 * {@code byte[]}: the value is copied once, straight into the {@link RecordSlab}, rather than
 * into an array first (one allocation and one copy per record saved). The view is only read
 * before the next poll, while the consumer's buffer behind it is still untouched.
 */
final class ValueViews implements Deserializer<ByteBuffer> {

    @Override
    public ByteBuffer deserialize(String topic, Headers headers, ByteBuffer data) {
        return data;
    }

    @Override
    public ByteBuffer deserialize(String topic, byte[] data) {
        return data == null ? null : ByteBuffer.wrap(data);
    }
}
