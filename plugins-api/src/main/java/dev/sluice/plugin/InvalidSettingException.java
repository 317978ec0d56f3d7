package dev.sluice.plugin;

/**
 * Thrown by a stage's {@code open} when a setting cannot work (a missing file, SQL that does
 * not plan). The runtime reports it at the line of that setting in the pipeline file.
 */
public final class InvalidSettingException extends RuntimeException {

    private final String key;

    /** @param key the setting at fault, or null for the node as a whole */
    public InvalidSettingException(String key, String message) {
        super(message);
        this.key = key;
    }

    public InvalidSettingException(String key, String message, Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /** The setting at fault, or null. */
    public String key() {
        return key;
    }
}
