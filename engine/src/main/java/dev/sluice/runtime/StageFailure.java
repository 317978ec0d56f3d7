package dev.sluice.runtime;

/** A stage failed while the pipeline ran; names the node. */
public final class StageFailure extends RuntimeException {

    private final String node;

    StageFailure(String node, Throwable cause) {
        super("node '" + node + "': " + describe(cause), cause);
        this.node = node;
    }

    public String node() {
        return node;
    }

    private static String describe(Throwable t) {
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
    }
}
