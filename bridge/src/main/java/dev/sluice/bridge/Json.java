package dev.sluice.bridge;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Options cross the boundary as one JSON message, not as long argument lists. Written with
 * jackson-core's streaming API: databind's ObjectMapper costs tens of milliseconds of class
 * initialization on the way to a pipeline's first record, for messages this small.
 */
final class Json {

    private static final JsonFactory FACTORY = new JsonFactory();

    private Json() {}

    /** {@code fields} as a JSON object; values are strings, numbers, booleans, null, lists and maps of them. */
    static String object(Map<String, ?> fields) {
        StringWriter out = new StringWriter();
        try (JsonGenerator json = FACTORY.createGenerator(out)) {
            write(json, fields);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot encode options " + fields, e);
        }
        return out.toString();
    }

    /** {@code values} as a JSON array; items as {@link #object} takes them. */
    static String array(Collection<?> values) {
        StringWriter out = new StringWriter();
        try (JsonGenerator json = FACTORY.createGenerator(out)) {
            write(json, values);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot encode " + values, e);
        }
        return out.toString();
    }

    private static void write(JsonGenerator json, Object value) throws IOException {
        switch (value) {
            case null -> json.writeNull();
            case String s -> json.writeString(s);
            case Boolean b -> json.writeBoolean(b);
            case Integer i -> json.writeNumber(i);
            case Long l -> json.writeNumber(l);
            case Number n -> json.writeNumber(n.toString());
            case Map<?, ?> map -> {
                json.writeStartObject();
                for (Map.Entry<?, ?> entry : map.entrySet()) {
                    json.writeFieldName(String.valueOf(entry.getKey()));
                    write(json, entry.getValue());
                }
                json.writeEndObject();
            }
            case Collection<?> list -> {
                json.writeStartArray();
                for (Object item : list) {
                    write(json, item);
                }
                json.writeEndArray();
            }
            default ->
                throw new IllegalArgumentException(
                        "cannot encode " + value.getClass().getName() + " as JSON: " + value);
        }
    }

    /** A JSON array of strings. */
    static List<String> stringArray(String text) throws IOException {
        List<String> items = new ArrayList<>();
        try (JsonParser parser = FACTORY.createParser(text)) {
            if (parser.nextToken() != JsonToken.START_ARRAY) {
                throw new IOException("not a JSON array");
            }
            for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
                if (token != JsonToken.VALUE_STRING) {
                    throw new IOException("not a string: " + token);
                }
                items.add(parser.getText());
            }
        }
        return items;
    }
}
