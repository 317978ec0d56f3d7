package dev.sluice.bridge;

/**
 * Base of the Java wrappers of native handles: owns one handle, frees it exactly once on
 * {@link #close()} (idempotent), and refuses use after close. Not thread-safe: a handle
 * belongs to the lane that created it.
 */
public abstract class NativeHandle implements AutoCloseable {

    private final String kind;
    private long address;

    protected NativeHandle(String kind, long address) {
        if (address == 0) {
            throw new NativeArgumentException("the core returned a NULL " + kind + " handle");
        }
        this.kind = kind;
        this.address = address;
    }

    /** The native address; throws if the handle was closed. */
    protected final long address() {
        long a = address;
        if (a == 0) {
            throw new IllegalStateException(kind + " used after close");
        }
        return a;
    }

    public final boolean isClosed() {
        return address == 0;
    }

    protected static CoreBridge core() {
        return NativeCore.bridge();
    }

    @Override
    public final void close() {
        long a = address;
        if (a != 0) {
            address = 0;
            free(a);
        }
    }

    /**
     * Gives the native object up without freeing it, for a caller that hands it to the core;
     * this wrapper is closed afterwards.
     */
    protected final long release() {
        long a = address();
        address = 0;
        return a;
    }

    /** Frees the native object at {@code address}; called at most once. */
    protected abstract void free(long address);

    @Override
    public String toString() {
        return kind + (address == 0 ? "(closed)" : "@" + Long.toHexString(address));
    }
}
