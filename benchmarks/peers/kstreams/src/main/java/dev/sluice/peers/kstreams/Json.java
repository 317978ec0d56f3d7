package dev.sluice.peers.kstreams;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/** JSON serdes: bids in, one Java record per output row out (keys = the record's components). */
final class Json {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            // 0.908 * price is a BigDecimal: write 908.000, never 9.08E+2.
            .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);
    private static final ObjectReader BIDS = MAPPER.readerFor(Bid.class);
    private static final ObjectWriter ROWS = MAPPER.writer();

    private Json() {}

    static Serde<Bid> bids() {
        Deserializer<Bid> read = (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            try {
                return BIDS.readValue(bytes);
            } catch (IOException e) {
                throw new SerializationException("not a bid: " + e.getMessage(), e);
            }
        };
        Serializer<Bid> write = (topic, bid) -> rowBytes(bid);
        return Serdes.serdeFrom(write, read);
    }

    /** Output rows are only written; reading them back is not this program's job. */
    static Serde<Object> rows() {
        Serializer<Object> write = (topic, row) -> rowBytes(row);
        Deserializer<Object> unused = (topic, bytes) -> {
            throw new UnsupportedOperationException("output rows are never read");
        };
        return Serdes.serdeFrom(write, unused);
    }

    static byte[] rowBytes(Object row) {
        if (row == null) {
            return null;
        }
        try {
            return ROWS.writeValueAsBytes(row);
        } catch (IOException e) {
            throw new SerializationException("cannot write " + row + ": " + e.getMessage(), e);
        }
    }
}
