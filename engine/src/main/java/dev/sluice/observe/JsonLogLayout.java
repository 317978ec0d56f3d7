package dev.sluice.observe;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.LayoutBase;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Map;

/**
 * One JSON object per log line ({@code --log-format json}): time, level, logger, pipeline and node
 * (from the MDC; null when the line is not about one), thread, message, and the error's stack
 * trace when there is one. Messages are masked with the pipeline's secrets ({@link Logs#mask}).
 */
public final class JsonLogLayout extends LayoutBase<ILoggingEvent> {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public String doLayout(ILoggingEvent event) {
        Map<String, String> mdc = event.getMDCPropertyMap();
        String pipeline = mdc.get(Logs.PIPELINE);
        ObjectNode line = JSON.createObjectNode()
                .put("time", Instant.ofEpochMilli(event.getTimeStamp()).toString())
                .put("level", event.getLevel().toString())
                .put("logger", event.getLoggerName())
                .put("pipeline", pipeline)
                .put("node", mdc.get(Logs.NODE))
                .put("thread", event.getThreadName())
                .put("message", Logs.mask(pipeline, event.getFormattedMessage()));
        IThrowableProxy error = event.getThrowableProxy();
        if (error != null) {
            line.put("error", Logs.mask(pipeline, ThrowableProxyUtil.asString(error)));
        }
        return line + "\n";
    }
}
