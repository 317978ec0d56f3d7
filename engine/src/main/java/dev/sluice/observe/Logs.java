package dev.sluice.observe;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.LayoutBase;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Logging through SLF4J and Logback, on stderr: text lines ({@code [pipeline] message}, the
 * default, also what {@link Configurator} sets up when logging starts) or JSON lines ({@code --log-format json}, see
 * {@link JsonLogLayout}). The pipeline and node of a line come from the MDC keys {@link #PIPELINE}
 * and {@link #NODE}: the runtime sets the pipeline on the threads that run one and the node around
 * stage calls that log; connectors set the node when they log. A pipeline's secrets are masked
 * in every line ({@link #maskFor}).
 */
public final class Logs {

    public static final String PIPELINE = "pipeline";
    public static final String NODE = "node";

    /** How lines are written. */
    public enum Format {
        TEXT,
        JSON;

        /** {@code text} or {@code json}. */
        public static Format parse(String name) {
            return switch (name) {
                case "text" -> TEXT;
                case "json" -> JSON;
                default -> throw new IllegalArgumentException("--log-format must be text or json, got '" + name + "'");
            };
        }
    }

    private static final Map<String, UnaryOperator<String>> MASKS = new ConcurrentHashMap<>();
    private static final Logger SLUICE = LoggerFactory.getLogger("dev.sluice");

    private Logs() {}

    /**
     * Sets the format, and whether the Kafka clients' own warnings show ({@code --verbose}); they
     * repeat what Sluice reports once with the reason, so they are off otherwise.
     */
    public static void configure(Format format, boolean verbose) {
        configure((LoggerContext) LoggerFactory.getILoggerFactory(), format, verbose);
    }

    /** Sets {@code context} up: the default (text, not verbose) is what {@link Configurator} installs. */
    static void configure(LoggerContext context, Format format, boolean verbose) {
        context.reset();
        LayoutBase<ILoggingEvent> layout = format == Format.JSON ? new JsonLogLayout() : new TextLayout();
        layout.setContext(context);
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.setCharset(StandardCharsets.UTF_8);
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("stderr");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.WARN);
        root.addAppender(stderr);
        context.getLogger("dev.sluice").setLevel(Level.INFO);
        context.getLogger("org.apache.kafka").setLevel(verbose ? Level.WARN : Level.OFF);
    }

    /**
     * Logback's configuration, found by its ServiceLoader ({@code
     * META-INF/services/ch.qos.logback.classic.spi.Configurator}) before it would look for XML:
     * text lines on stderr, Sluice at INFO, libraries at WARN, the Kafka clients off. Set up in
     * code because reading a logback.xml was one of the slowest steps of every start (its XML
     * parser and configuration model, timed by hand on the first logger a run makes).
     */
    public static final class Configurator extends ContextAwareBase implements ch.qos.logback.classic.spi.Configurator {
        @Override
        public ExecutionStatus configure(LoggerContext context) {
            Logs.configure(context, Format.TEXT, false);
            return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
        }
    }

    /** Masks every later line of {@code pipeline} with {@code mask} (its secrets and references). */
    public static void maskFor(String pipeline, UnaryOperator<String> mask) {
        MASKS.put(pipeline, mask);
    }

    static String mask(String pipeline, String text) {
        UnaryOperator<String> mask = pipeline == null ? null : MASKS.get(pipeline);
        return mask == null || text == null ? text : mask.apply(text);
    }

    /** Logs {@code message} at {@code level} as a line of {@code pipeline} and {@code node} (may be null). */
    public static void log(Level level, String pipeline, String node, String message) {
        String outerPipeline = MDC.get(PIPELINE);
        String outerNode = MDC.get(NODE);
        put(PIPELINE, pipeline);
        put(NODE, node);
        try {
            switch (level.toInt()) {
                case Level.ERROR_INT -> SLUICE.error(message);
                case Level.WARN_INT -> SLUICE.warn(message);
                default -> SLUICE.info(message);
            }
        } finally {
            put(PIPELINE, outerPipeline);
            put(NODE, outerNode);
        }
    }

    private static void put(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }

    /**
     * A stream whose every line becomes a log line of {@code pipeline} at {@code level}: how the
     * progress reporter and a run's error report reach JSON logs.
     */
    public static PrintStream lines(Level level, String pipeline) {
        return lineStream(pipeline, line -> log(level, pipeline, null, line));
    }

    /**
     * A stream that hands each printed line to {@code onLine}, stripped, without a leading
     * {@code [pipeline] } (the line carries the pipeline anyway) and skipping empty ones; a
     * carriage return (a terminal's redrawn progress line) is dropped.
     */
    public static PrintStream lineStream(String pipeline, java.util.function.Consumer<String> onLine) {
        String prefix = "[" + pipeline + "] ";
        return new PrintStream(
                new OutputStream() {
                    private final ByteArrayOutputStream current = new ByteArrayOutputStream();

                    @Override
                    public synchronized void write(int b) {
                        if (b == '\n') {
                            String line =
                                    current.toString(StandardCharsets.UTF_8).strip();
                            current.reset();
                            if (line.startsWith(prefix)) {
                                line = line.substring(prefix.length());
                            }
                            if (!line.isEmpty()) {
                                onLine.accept(line);
                            }
                        } else if (b != '\r') {
                            current.write(b);
                        }
                    }
                },
                true,
                StandardCharsets.UTF_8);
    }

    /** {@code [pipeline] message} (the pipeline part only when the line has one), then the stack trace. */
    public static final class TextLayout extends LayoutBase<ILoggingEvent> {
        @Override
        public String doLayout(ILoggingEvent event) {
            String pipeline = event.getMDCPropertyMap().get(PIPELINE);
            StringBuilder line = new StringBuilder();
            if (pipeline != null) {
                line.append('[').append(pipeline).append("] ");
            }
            line.append(mask(pipeline, event.getFormattedMessage())).append('\n');
            if (event.getThrowableProxy() != null) {
                line.append(mask(pipeline, ThrowableProxyUtil.asString(event.getThrowableProxy())))
                        .append('\n');
            }
            return line.toString();
        }
    }
}
