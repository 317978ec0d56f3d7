package dev.sluice.state;

/**
 * A run was refused a state DB that holds the checkpoints of another pipeline file with the
 * same name: resuming them would make it skip what that pipeline read. The message names both
 * files and the ways out.
 */
public final class StateOwnedElsewhereException extends StateException {

    private static final long serialVersionUID = 1L;

    public StateOwnedElsewhereException(String message) {
        super(message);
    }
}
