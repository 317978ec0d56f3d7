package dev.sluice.connector.kafka;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.ConfigDef;
import dev.sluice.config.ConfigType;
import dev.sluice.config.ParsedConfig;
import dev.sluice.plugin.InvalidSettingException;
import java.io.IOException;
import java.util.Collection;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;

/** Settings shared by the Kafka source and sink, and the client properties they build. */
final class KafkaSettings {

    private static final ObjectMapper JSON = new ObjectMapper();

    private KafkaSettings() {}

    static ConfigDef client(ConfigDef def) {
        return def
                .define("bootstrap_servers", ConfigType.STRING, null, false,
                        "The brokers, host:port[,host:port]. Default: properties' bootstrap.servers, else 127.0.0.1:9092.")
                .define("properties", ConfigType.MAP, null, false,
                        "Kafka client properties passed through as they are (security, timeouts, tuning).");
    }

    static Properties clientProperties(ParsedConfig config) {
        Properties props = new Properties();
        if (config.has("properties")) {
            props.putAll(config.getMap("properties"));
        }
        if (config.has("bootstrap_servers")) {
            props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, config.getString("bootstrap_servers"));
        }
        props.putIfAbsent(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9092");
        return props;
    }

    /**
     * Fails at start, with the reason, when the brokers cannot be reached or a topic does not
     * exist — rather than a consumer that waits forever.
     */
    static void checkReachable(Properties props, Collection<String> topics) {
        Properties admin = new Properties();
        admin.putAll(props);
        admin.putIfAbsent(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        admin.putIfAbsent(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        String servers = props.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        try (Admin client = Admin.create(admin)) {
            Set<String> existing = client.listTopics().names().get(15, TimeUnit.SECONDS);
            for (String topic : topics) {
                if (!existing.contains(topic)) {
                    throw new InvalidSettingException("topic", "topic '" + topic + "' does not exist on " + servers);
                }
            }
        } catch (TimeoutException e) {
            throw new InvalidSettingException("bootstrap_servers", "no Kafka broker answered at " + servers + " within 15 s");
        } catch (ExecutionException e) {
            throw new InvalidSettingException("bootstrap_servers", "Kafka at " + servers + ": " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InvalidSettingException("bootstrap_servers", "interrupted while connecting to " + servers);
        } catch (org.apache.kafka.common.KafkaException e) {
            throw new InvalidSettingException("bootstrap_servers", "Kafka at " + servers + ": " + e.getMessage());
        }
    }

    /** The offset in a state DB position ({@code {"offset": N, ...}}). */
    static long offsetOf(String positionJson) {
        try {
            return JSON.readTree(positionJson).get("offset").asLong();
        } catch (IOException | NullPointerException e) {
            throw new IllegalStateException("bad position in the state DB: " + positionJson, e);
        }
    }
}
