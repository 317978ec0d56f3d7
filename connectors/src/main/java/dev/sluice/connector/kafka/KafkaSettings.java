package dev.sluice.connector.kafka;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** Settings shared by the Kafka source and sink, and the client properties they build. */
final class KafkaSettings {

    /** The {@code bootstrap_servers} setting. */
    public static final String BOOTSTRAP_SERVERS = "bootstrap_servers";
    /** The {@code properties} setting. */
    public static final String PROPERTIES = "properties";

    private static final JsonFactory JSON = new JsonFactory();

    private static final AtomicBoolean MBEAN_SERVER_STARTED = new AtomicBoolean();

    private KafkaSettings() {}

    /**
     * Every Kafka client registers an MBean, and the platform MBean server's first use takes
     * ~200 ms (it introspects every platform MXBean and diagnostic command), under a
     * lock the consumer and the access checks then wait on. Started in the background as soon as
     * a pipeline names a Kafka stage, it is ready by the time the consumer is created.
     */
    static void startPlatformMBeanServer() {
        if (MBEAN_SERVER_STARTED.compareAndSet(false, true)) {
            Thread.ofPlatform()
                    .daemon()
                    .name("sluice-mbean-server-start")
                    .start(ManagementFactory::getPlatformMBeanServer);
        }
    }

    static ConfigDef client(ConfigDef def) {
        return def.define(
                        BOOTSTRAP_SERVERS,
                        ConfigType.STRING,
                        null,
                        false,
                        "The brokers, host:port[,host:port]. Default: properties' bootstrap.servers, else 127.0.0.1:9092.")
                .define(
                        PROPERTIES,
                        ConfigType.MAP,
                        null,
                        false,
                        "Kafka client properties passed through as they are (security, timeouts, tuning).")
                .define(
                        CHECK_TIMEOUT,
                        ConfigType.DURATION,
                        "5s",
                        false,
                        "How long the check at start (brokers reachable, topic there, ACLs) waits for a broker "
                                + "before the run fails with the reason.");
    }

    static final String CHECK_TIMEOUT = "check_timeout";

    /** The start-up check's timeout, carried to {@link #checkAccess} in the client properties. */
    private static final String CHECK_TIMEOUT_PROPERTY = "sluice.check.timeout.ms";

    /** The client properties for {@link #checkAccess}: the stage's, plus its check timeout. */
    static Properties checkProperties(Properties props, Settings config) {
        Properties check = new Properties();
        check.putAll(props);
        check.put(
                CHECK_TIMEOUT_PROPERTY,
                Long.toString(Math.max(1, config.getDuration(CHECK_TIMEOUT).toMillis())));
        return check;
    }

    static Properties clientProperties(Settings config) {
        Properties props = new Properties();
        if (config.has(PROPERTIES)) {
            props.putAll(config.getMap(PROPERTIES));
        }
        if (config.has(BOOTSTRAP_SERVERS)) {
            props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, config.getString(BOOTSTRAP_SERVERS));
        }
        props.putIfAbsent(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9092");
        KafkaClientDefaults.metrics(props);
        return props;
    }

    /**
     * Fails at start, with the reason, when the brokers cannot be reached, a topic does not
     * exist, or the client's principal may not use a topic ({@code operation}: READ for sources,
     * WRITE for sinks) or the consumer group ({@code group}, null for sinks) — rather than a
     * consumer that waits forever or a producer that fails on its first send.
     */
    static void checkAccess(Properties props, Collection<String> topics, AclOperation operation, String group) {
        checkAccess(props, topics, operation, group, client -> {});
    }

    /** As above, then runs {@code more} with the same Admin client (best-effort look-ups). */
    static void checkAccess(
            Properties props,
            Collection<String> topics,
            AclOperation operation,
            String group,
            java.util.function.Consumer<Admin> more) {
        Properties admin = new Properties();
        admin.putAll(props);
        long timeoutMs = Long.parseLong((String) admin.remove(CHECK_TIMEOUT_PROPERTY));
        // The admin lives for this check only: its timeouts are the check's, whatever the
        // stage's clients use. An unreachable broker fails the start after check_timeout.
        admin.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(timeoutMs));
        admin.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(timeoutMs));
        String within = "within " + formatMillis(timeoutMs) + " (" + CHECK_TIMEOUT + ")";
        // The admin lives for this one check; with the default 100 ms backoff, describing a
        // group that has no coordinator state yet adds about 100 ms to every start.
        admin.putIfAbsent(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG, "10");
        String servers = props.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        try (Admin client = Admin.create(admin)) {
            Map<String, KafkaFuture<TopicDescription>> described = client.describeTopics(
                            topics, new DescribeTopicsOptions().includeAuthorizedOperations(true))
                    .topicNameValues();
            for (String topic : topics) {
                TopicDescription description;
                try {
                    description = described.get(topic).get(timeoutMs + 1_000, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
                        throw new InvalidSettingException(
                                BOOTSTRAP_SERVERS, "no Kafka broker answered at " + servers + " " + within);
                    }
                    throw topicProblem(topic, servers, e.getCause());
                }
                Set<AclOperation> allowed = description.authorizedOperations();
                if (allowed != null && !allowed.contains(operation) && !allowed.contains(AclOperation.ALL)) {
                    throw new InvalidSettingException(
                            KafkaSource.TOPIC,
                            "not authorized to " + operation.name().toLowerCase()
                                    + " topic '" + topic + "' on " + servers + " as this client's principal (allowed: "
                                    + allowed + "); grant the ACL or change the credentials in properties:");
                }
            }
            if (group != null) {
                checkGroup(client, group, servers, timeoutMs + 1_000);
            }
            more.accept(client);
        } catch (TimeoutException e) {
            throw new InvalidSettingException(
                    BOOTSTRAP_SERVERS, "no Kafka broker answered at " + servers + " " + within);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InvalidSettingException(BOOTSTRAP_SERVERS, "interrupted while connecting to " + servers);
        } catch (KafkaException e) {
            throw new InvalidSettingException(BOOTSTRAP_SERVERS, "Kafka at " + servers + ": " + e.getMessage());
        }
    }

    /**
     * Removes the static member {@code instanceId} from {@code group} (the Admin API's LeaveGroup,
     * which fences it); a member already gone is fine. Fails with the cause otherwise.
     */
    static void removeStaticMember(Properties props, String group, String instanceId) {
        try (Admin client = Admin.create(props)) {
            client.removeMembersFromConsumerGroup(
                            group, new RemoveMembersFromConsumerGroupOptions(List.of(new MemberToRemove(instanceId))))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            // Gone meanwhile (its session expired): nothing to remove.
            if (!(e.getCause() instanceof UnknownMemberIdException)) {
                throw new IllegalStateException(
                        "cannot remove the stale member with instance id " + instanceId + " from group " + group + ": "
                                + e.getCause().getMessage(),
                        e.getCause());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while removing instance id " + instanceId, e);
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "removing the stale member with instance id " + instanceId + " from group " + group
                            + " took over 30 s",
                    e);
        }
    }

    /** The topic's max.message.bytes, or -1 when it cannot be read (no DESCRIBE_CONFIGS ACL). */
    static int maxMessageBytes(Admin client, String topic) {
        try {
            org.apache.kafka.common.config.ConfigResource resource = new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
            var entry = client.describeConfigs(List.of(resource))
                    .all()
                    .get(10, TimeUnit.SECONDS)
                    .get(resource)
                    .get("max.message.bytes");
            return entry == null || entry.value() == null ? -1 : Integer.parseInt(entry.value());
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static InvalidSettingException topicProblem(String topic, String servers, Throwable cause) {
        if (cause instanceof UnknownTopicOrPartitionException) {
            return new InvalidSettingException(KafkaSource.TOPIC, "topic '" + topic + "' does not exist on " + servers);
        }
        if (cause instanceof TopicAuthorizationException) {
            return new InvalidSettingException(
                    KafkaSource.TOPIC,
                    "not authorized to describe topic '" + topic + "' on " + servers
                            + " as this client's principal; grant the ACL or change the credentials in properties:");
        }
        if (cause instanceof AuthenticationException) {
            return new InvalidSettingException(
                    PROPERTIES, "Kafka at " + servers + " refused the credentials: " + cause.getMessage());
        }
        return new InvalidSettingException(BOOTSTRAP_SERVERS, "Kafka at " + servers + ": " + cause.getMessage());
    }

    private static String formatMillis(long ms) {
        return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
    }

    private static void checkGroup(Admin client, String group, String servers, long timeoutMs)
            throws InterruptedException, TimeoutException {
        try {
            Set<AclOperation> allowed = client.describeConsumerGroups(
                            List.of(group), new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true))
                    .describedGroups()
                    .get(group)
                    .get(timeoutMs, TimeUnit.MILLISECONDS)
                    .authorizedOperations();
            if (allowed != null && !allowed.contains(AclOperation.READ) && !allowed.contains(AclOperation.ALL)) {
                throw new InvalidSettingException(
                        KafkaSource.GROUP_ID,
                        "not authorized to read as consumer group '" + group + "' on " + servers + " (allowed: "
                                + allowed + "); grant the ACL or change group_id");
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupAuthorizationException) {
                throw new InvalidSettingException(
                        KafkaSource.GROUP_ID,
                        "not authorized to use consumer group '" + group + "' on " + servers
                                + " as this client's principal; grant the ACL or change group_id");
            }
            // A group that does not exist yet, or a broker without group descriptions: the consumer will say.
        }
    }

    /** The id in a state DB entry {@code {"id": "..."}} (a source's group instance id). */
    static String idOf(String json) {
        try (JsonParser parser = JSON.createParser(json)) {
            if (parser.nextToken() == JsonToken.START_OBJECT) {
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String field = parser.currentName();
                    JsonToken value = parser.nextToken();
                    if (field.equals("id") && value == JsonToken.VALUE_STRING) {
                        return parser.getText();
                    }
                    parser.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("bad group instance id in the state DB: " + json, e);
        }
        throw new IllegalStateException("bad group instance id in the state DB (no \"id\"): " + json);
    }

    static String idJson(String id) {
        java.io.StringWriter out = new java.io.StringWriter();
        try (com.fasterxml.jackson.core.JsonGenerator json = JSON.createGenerator(out)) {
            json.writeStartObject();
            json.writeStringField("id", id);
            json.writeEndObject();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toString();
    }

    /** The offset in a state DB position ({@code {"offset": N, ...}}). */
    static long offsetOf(String positionJson) {
        try (JsonParser parser = JSON.createParser(positionJson)) {
            if (parser.nextToken() == JsonToken.START_OBJECT) {
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String field = parser.currentName();
                    JsonToken value = parser.nextToken();
                    if (field.equals("offset") && value == JsonToken.VALUE_NUMBER_INT) {
                        return parser.getLongValue();
                    }
                    parser.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("bad position in the state DB: " + positionJson, e);
        }
        throw new IllegalStateException("bad position in the state DB (no \"offset\"): " + positionJson);
    }
}
