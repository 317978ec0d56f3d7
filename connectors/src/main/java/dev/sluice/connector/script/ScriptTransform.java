package dev.sluice.connector.script;

import dev.sluice.connector.jsonrows.JsonRows;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.Transform;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.mozilla.javascript.Context;
import org.mozilla.javascript.Function;
import org.mozilla.javascript.RhinoException;
import org.mozilla.javascript.Scriptable;
import org.mozilla.javascript.ScriptableObject;

/**
 * The {@code script} transform: a JavaScript {@code process(row)} run on every row, in a sandbox
 * ({@link Sandbox}: no Java, no I/O, a time limit). Rows cross as JSON, encoded and decoded in
 * the core ({@link JsonRows}); the script sees each row as a plain object and returns it, an
 * array of rows, or null to drop it.
 */
public final class ScriptTransform implements Transform {

    public static final String SCRIPT = "script";
    public static final String SCHEMA = "schema";
    public static final String TIMEOUT = "timeout";

    /** The script's name in messages ("script line 3"). */
    static final String SOURCE_NAME = "script";

    /** The {@code script} transform's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(
                new ConfigDef()
                        .define(
                                SCRIPT,
                                ConfigType.STRING,
                                null,
                                true,
                                "JavaScript (ES6, run sandboxed by Rhino: no Java classes, no I/O) defining `function "
                                        + "process(row)`: called with each row as a plain object, it returns the row (changed "
                                        + "or not), an array of rows, or null to drop it.",
                                Validator.nonEmpty())
                        .define(
                                SCHEMA,
                                ConfigType.MAP,
                                null,
                                false,
                                "The columns of the rows `process` returns, name → type (" + ColumnTypes.ACCEPTED
                                        + "). "
                                        + "Default: the input's columns. Fields not declared are left out; a declared one "
                                        + "that is missing is NULL.")
                        .define(
                                TIMEOUT,
                                ConfigType.DURATION,
                                "10s",
                                false,
                                "Longest the script may run on one batch (and its top level at start); longer fails "
                                        + "the run, naming the node."),
                "fail",
                "What to do with a row whose `process` threw, returned something other than an object, "
                        + "an array of objects or null, or returned a row that does not fit `schema`; and with "
                        + "an input row holding an integer or decimal a JavaScript number cannot carry "
                        + "exactly: fail the run, write it with the reason to the dead letter, or skip it "
                        + "(counted).");

        public Type() {
            super(
                    NodeKind.TRANSFORM,
                    "script",
                    "A sandboxed JavaScript `process(row)` run on every row: no Java, no I/O, a time limit per "
                            + "batch. Returns the row, several, or none.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public ScriptTransform create(Settings settings) {
            return new ScriptTransform(settings);
        }
    }

    /**
     * Runs process over a batch's rows (a JSON array) and returns {@code [JSON array of the rows
     * made, their input row indexes, errors as index, message pairs]}. Built before the user's
     * script runs, from the JSON functions as they were then.
     */
    private static final String BATCH_RUNNER = """
            (function (parse, stringify, isArray, isFinite) {
              function oneRow(value) {
                if (value === null || typeof value !== 'object' || isArray(value)) {
                  throw new TypeError('process returned ' + (value === null ? 'null inside an array' : isArray(value)
                      ? 'an array inside an array' : typeof value) + ', not a row (an object)');
                }
                // stringify writes Infinity and NaN as null: only a row with a null anywhere in its
                // text is written again, looking at every value (a replacer per value costs ~15 %).
                var text = stringify(value);
                return text.indexOf('null') < 0 ? text : stringify(value, finiteOnly);
              }
              function finiteOnly(key, v) {
                if (typeof v === 'number' && !isFinite(v)) {
                  throw new RangeError('field "' + key + '" is ' + v + ', which JSON cannot carry');
                }
                return v;
              }
              function where(e) {
                var at = /at script:(\\d+)/.exec(String(e && e.stack));
                return at ? ' (script line ' + at[1] + ')' : '';
              }
              return function (text, process) {
                var rows = parse(text), out = [], origins = [], errors = [];
                for (var i = 0; i < rows.length; i++) {
                  var result;
                  try {
                    result = process(rows[i]);
                  } catch (e) {
                    errors.push(i, 'process threw ' + String(e) + where(e));
                    continue;
                  }
                  if (result === null || result === undefined) continue;
                  try {
                    var list = isArray(result) ? result : [result], made = [];
                    for (var j = 0; j < list.length; j++) made.push(oneRow(list[j]));
                    for (var k = 0; k < made.length; k++) { out.push(made[k]); origins.push(i); }
                  } catch (e) {
                    errors.push(i, e.message);
                  }
                }
                return ['[' + out.join(',') + ']', origins, errors];
              };
            })(JSON.parse, JSON.stringify, Array.isArray, isFinite)
            """;

    private final Settings config;
    private final long timeoutNanos;

    private StageContext context;
    private JsonRows json;
    private ExactNumbers exact;
    private final Sandbox sandbox = new Sandbox();
    private Scriptable scope;
    private Function process;
    private Function runner;
    private long rowsSeen;

    ScriptTransform(Settings config) {
        this.config = config;
        this.timeoutNanos = config.getDuration(TIMEOUT).toNanos();
    }

    @Override
    public Schema open(StageContext context, List<String> inputNames, List<Schema> inputSchemas) {
        this.context = context;
        if (inputNames.size() != 1) {
            throw new InvalidSettingException("from", "a script transform reads one input, not " + inputNames.size());
        }
        Schema input = inputSchemas.get(0);
        exact = ExactNumbers.of(input); // refuses nested numbers a JavaScript number cannot carry
        Schema output;
        if (config.has(SCHEMA)) {
            try {
                output = ColumnTypes.schema(config.getMap(SCHEMA));
            } catch (IllegalArgumentException e) {
                throw new InvalidSettingException(SCHEMA, e.getMessage());
            }
        } else {
            output = nullable(input);
        }
        try {
            json = new JsonRows(context, output);
        } catch (RuntimeException e) {
            throw new InvalidSettingException(
                    SCHEMA, "these columns cannot be read back from JSON (" + e.getMessage() + "); declare schema:");
        }
        compile(config.getString(SCRIPT));
        return json.schema();
    }

    /**
     * The input's columns, each allowed to be NULL: a script may leave any field out. Without
     * the input's key: a script may change a key column or return several rows for one.
     */
    private static Schema nullable(Schema schema) {
        List<Field> fields = new ArrayList<>();
        for (Field f : schema.getFields()) {
            FieldType type = new FieldType(true, f.getType(), f.getDictionary(), f.getMetadata());
            fields.add(new Field(f.getName(), type, f.getChildren()));
        }
        return PrimaryKey.with(new Schema(fields, schema.getCustomMetadata()), List.of());
    }

    /** Runs the script's top level in a fresh sandbox; it must define process. */
    private void compile(String script) {
        Context cx = sandbox.enter(timeoutNanos);
        try {
            scope = cx.initSafeStandardObjects(null, true);
            runner = (Function) cx.evaluateString(scope, BATCH_RUNNER, "sluice", 1, null);
            cx.evaluateString(scope, script, SOURCE_NAME, 1, null);
            Object defined = ScriptableObject.getProperty(scope, "process");
            if (!(defined instanceof Function function)) {
                throw new InvalidSettingException(SCRIPT, "defines no function process(row)");
            }
            process = function;
        } catch (RhinoException e) {
            throw new InvalidSettingException(SCRIPT, "line " + e.lineNumber() + ": " + e.details());
        } catch (Sandbox.TimeUp e) {
            throw new InvalidSettingException(SCRIPT, "its top level ran longer than timeout (" + millis() + ")");
        } catch (OutOfMemoryError e) {
            forgetScript();
        } finally {
            Context.exit();
        }
        if (process == null) {
            throw heapFilled("running its top level");
        }
    }

    @Override
    public void process(int input, Batch batch, Emitter out) {
        List<byte[]> rows = json.encode(batch);
        long first = rowsSeen;
        rowsSeen += rows.size();
        // Rows a JavaScript number would change go to on_error before the script sees them.
        List<String> inexact = exact.check(batch, context.allocator());
        List<Integer> passed = new ArrayList<>(rows.size());
        List<byte[]> handed = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            if (inexact != null && inexact.get(i) != null) {
                context.reject(first + i, rows.get(i), inexact.get(i));
            } else {
                passed.add(i);
                handed.add(rows.get(i));
            }
        }
        if (handed.isEmpty()) {
            return;
        }
        String rowsText = new String(JsonRows.array(handed), StandardCharsets.UTF_8);
        List<?> result = runBatch(rowsText, () -> "on a batch of " + handed.size() + " rows (from row " + first + ")");
        List<?> errors = (List<?>) result.get(2);
        for (int e = 0; e < errors.size(); e += 2) {
            int at = passed.get(((Number) errors.get(e)).intValue());
            context.reject(first + at, rows.get(at), String.valueOf(errors.get(e + 1)));
        }
        List<?> origins = (List<?>) result.get(1);
        byte[] text = result.get(0).toString().getBytes(StandardCharsets.UTF_8);
        List<JsonRows.Row<Void>> made = new ArrayList<>(origins.size());
        String problem = JsonRows.split(text, null, made);
        if (problem != null) {
            throw new IllegalStateException("the script's rows did not come back as JSON: " + problem);
        }
        json.emit(made, out, (row, record, error) -> {
            // origins[i]: the index, among the rows handed to the script, of the row made i-th
            long at = first + passed.get(((Number) origins.get(row.element())).intValue());
            context.reject(at, record, "a row process returned for row " + at + " does not fit the schema: " + error);
        });
    }

    /**
     * The runner's answer for a batch of rows, {@code text}; {@code where} names the batch in
     * errors. A script that fills the heap is forgotten here, and reported once this frame and
     * the context, which hold its last frames, are gone.
     */
    private List<?> runBatch(String text, Supplier<String> where) {
        List<?> result = callRunner(text, where);
        if (result == null) {
            throw heapFilled(where.get());
        }
        return result;
    }

    private List<?> callRunner(String text, Supplier<String> where) {
        Context cx = sandbox.enter(timeoutNanos);
        try {
            return (List<?>) runner.call(cx, scope, scope, new Object[] {text, process});
        } catch (Sandbox.TimeUp e) {
            throw new IllegalStateException("the script ran longer than timeout (" + millis() + ") " + where.get());
        } catch (OutOfMemoryError e) {
            forgetScript();
            return null;
        } finally {
            Context.exit();
        }
    }

    private void forgetScript() {
        scope = null;
        runner = null;
        process = null;
    }

    /**
     * The script filled the JVM's heap, which it shares with the process (Rhino bounds time and
     * stack, not memory). Forgetting its scope makes everything its globals held garbage, so the
     * run ends with this message, not a bare OutOfMemoryError, and under {@code serve} the other
     * pipelines go on. Built after {@link #forgetScript} and leaving the context.
     */
    private IllegalStateException heapFilled(String when) {
        return new IllegalStateException("the script filled the heap ("
                + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB) " + when
                + ": its memory is not bounded apart from the process's; keep what its globals hold across rows "
                + "small, or give the process more heap (SLUICE_JAVA_OPTS=-Xmx...)");
    }

    private String millis() {
        return timeoutNanos / 1_000_000 + " ms";
    }

    @Override
    public void close() {
        if (json != null) {
            json.close();
        }
    }
}
