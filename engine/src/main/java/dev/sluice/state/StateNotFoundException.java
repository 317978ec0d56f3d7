package dev.sluice.state;

/**
 * There is no state DB where one was expected: the directory is missing or holds no RocksDB
 * database. For the CLI this is bad input (a wrong pipeline name or {@code --state-dir}).
 */
public final class StateNotFoundException extends StateException {

    private static final long serialVersionUID = 1L;

    public StateNotFoundException(String message) {
        super(message);
    }
}
