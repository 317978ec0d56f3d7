package dev.sluice.connector.script;

import org.mozilla.javascript.Context;
import org.mozilla.javascript.ContextFactory;

/**
 * Where a script runs: Rhino contexts that interpret (so that instructions are counted and a
 * deadline can stop a loop that never ends), see no Java class (with the safe standard objects
 * there is no {@code java}, {@code Packages} or {@code JavaAdapter} either, nor any I/O), and
 * bound the interpreter's stack (recursing deeper is the row's error; compiled scripts would
 * overflow the JVM's stack instead, and ran only ~7 % faster on the transforms benchmark's script,
 * where JSON is most of the cost). Memory is not bounded: a script that allocates without end
 * fills the heap, and {@link ScriptTransform} then drops it and fails the run.
 */
final class Sandbox extends ContextFactory {

    /** Thrown out of a script past its deadline: an {@link Error}, which a script's catch does not see. */
    static final class TimeUp extends Error {
        TimeUp() {
            super("the script ran past its deadline", null, false, false);
        }
    }

    private static final Object DEADLINE = new Object();

    /** Enters a context on this thread that stops {@code nanos} from now; leave with {@link Context#exit}. */
    Context enter(long nanos) {
        Context cx = enterContext();
        cx.putThreadLocal(DEADLINE, System.nanoTime() + nanos);
        return cx;
    }

    @Override
    protected void onContextCreated(Context cx) {
        super.onContextCreated(cx);
        cx.setInterpretedMode(true);
        cx.setLanguageVersion(Context.VERSION_ES6);
        // Not only for LiveConnect: a caught Rhino error carries its Java exception
        // (e.rhinoException, e.javaException) unless that exception's class is hidden too.
        cx.setClassShutter(className -> false);
        cx.setInstructionObserverThreshold(10_000);
        cx.setMaximumInterpreterStackDepth(2_000);
    }

    @Override
    protected void observeInstructionCount(Context cx, int instructionCount) {
        if (cx.getThreadLocal(DEADLINE) instanceof Long deadline && System.nanoTime() - deadline > 0) {
            throw new TimeUp();
        }
    }
}
