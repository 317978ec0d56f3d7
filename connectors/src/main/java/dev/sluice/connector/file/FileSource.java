package dev.sluice.connector.file;

import dev.sluice.bridge.FileFormats;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeException;
import dev.sluice.bridge.NativeFileReader;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.FileCheckpoint;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Source;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The {@code file} source: a JSON-lines, CSV or Parquet file, read and decoded in the core, or
 * a directory's files of one format one after the other in name order (the part files a
 * {@code file} sink with {@code parts: true} writes), all with the first one's schema.
 * Lines that do not decode go to the node's {@code on_error} policy with their file and line number.
 */
public final class FileSource implements Source {

    private static final Logger LOG = LoggerFactory.getLogger(FileSource.class);

    /** The {@code path} setting. */
    public static final String PATH = "path";
    /** The {@code format} setting. */
    public static final String FORMAT = "format";
    /** The {@code schema} setting. */
    public static final String SCHEMA = "schema";
    /** The {@code header} setting. */
    public static final String HEADER = "header";
    /** The {@code delimiter} setting. */
    public static final String DELIMITER = "delimiter";
    /** The {@code infer_rows} setting. */
    public static final String INFER_ROWS = "infer_rows";

    /** The {@code file} source's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(StandardKeys.batching(new ConfigDef()
                .define(
                        PATH,
                        ConfigType.PATH,
                        null,
                        true,
                        "The file to read, relative to the pipeline file; or a directory, whose files of the format "
                                + "(by extension; hidden ones and those starting with _ left out) are read in name order; "
                                + "other entries, subdirectories among them, are named in a warning, and a compressed file "
                                + "of the format (a.jsonl.gz) is refused.")
                .defineEnum(
                        FORMAT,
                        FileFormats.ALL,
                        null,
                        false,
                        "json (one object per line), csv or parquet. Default: from the file extension (a directory: "
                                + "the one format its files' extensions name; files of several formats need format:).")
                .define(
                        SCHEMA,
                        ConfigType.MAP,
                        null,
                        false,
                        "Columns and types, e.g. {id: bigint, name: string, at: timestamp(ms)}. JSON and CSV only; "
                                + "absent: inferred from the first infer_rows lines. Types: " + ColumnTypes.ACCEPTED
                                + ".")
                .define(HEADER, ConfigType.BOOLEAN, true, false, FileFormats.CSV_HEADER_DOC)
                .define(DELIMITER, ConfigType.STRING, ",", false, "CSV: the field delimiter (one character).")
                .define(
                        INFER_ROWS,
                        ConfigType.INT,
                        1000,
                        false,
                        "Lines read to infer a schema when none is declared.")));

        public Type() {
            super(NodeKind.SOURCE, "file", "Reads a file once, start to end (a bounded source).", CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public FileSource create(Settings settings) {
            return new FileSource(settings);
        }

        /** A pipeline of files alone reads them again each run; beside Kafka it goes on. */
        @Override
        public boolean positionsResumeARun() {
            return false;
        }
    }

    /** Position keys: the file being read at the checkpoint (and its length), and how far. */
    static final String POSITION_FILE = "read/file";

    static final String POSITION_READ = "read/records";
    /**
     * What the checkpoint saw of the files, as JSON strings: the names and lengths of the
     * directory's files before the one being read (a digest), and that file's inode and first
     * bytes (up to 64 KiB; a digest). A resumed run skips by count, so it goes on only where these
     * are the same — the file itself may have grown.
     */
    static final String POSITION_BEFORE = "read/before";

    static final String POSITION_HEAD = "read/head";

    private static final Pattern READ = Pattern.compile("\\{\"rows\": ?(\\d+), ?\"rejected\": ?(\\d+)}");

    /** The core's error text for a blank line (file_io::BLANK_LINE). */
    static final String BLANK_LINE = "blank line, skipped";

    private final Path path;
    /** The files to read: {@code path}, or the directory's in name order. */
    private final List<Path> files;

    private final String format;
    /** A directory's entries that are not read (a README, subdirectories), for a warning. */
    private final List<String> leftOut;

    private final Map<String, String> declared;
    private final Map<String, Object> options = new HashMap<>();
    private NativeFileReader reader;
    /** The index in {@code files} of the one {@code reader} reads. */
    private int current;

    private Schema schema;
    private StageContext context;

    /** Rows emitted and records rejected (blank lines too) of the current file so far. */
    private long rowsOfFile;

    private long rejectedOfFile;
    /** What a resumed run skips of the file it resumes in: what the checkpoint had read of it. */
    private int resumeFile = -1;

    private long rowsToSkip;
    private long rejectedToSkip;
    /** {@link FileIdentity} of the file at {@code seenIndex}, taken at its first barrier. */
    private String seenBefore;

    private String seenHead;
    private int seenIndex = -1;
    /** The position at each barrier, until its epoch (or a later one) is finalized. */
    private final TreeMap<Long, Map<String, String>> atBarrier = new TreeMap<>();

    FileSource(Settings config) {
        this.path = config.getPath(PATH);
        String configured = config.has(FORMAT) ? config.getString(FORMAT) : null;
        if (Files.isDirectory(path)) {
            List<Path> all = listed(path);
            this.format = configured != null ? configured : onlyFormat(path, all);
            this.files = all.stream().filter(f -> format.equals(formatOf(f))).toList();
            if (files.isEmpty()) {
                throw new InvalidSettingException(PATH, "the directory " + path + " holds no " + format + " files");
            }
            this.leftOut = leftOut(path, format, files);
        } else {
            this.format = FileFormats.resolve(configured, path);
            this.files = List.of(path);
            this.leftOut = List.of();
        }
        this.declared = config.has(SCHEMA) ? config.getMap(SCHEMA) : null;
        options.put("format", format);
        options.put("batch_size", config.getInt(StandardKeys.BATCH_SIZE));
        options.put("header", config.getBoolean(HEADER));
        options.put("delimiter", config.getString(DELIMITER));
        options.put("infer_rows", config.getInt(INFER_ROWS));
    }

    /** A directory's files that are not hidden, in name order; refused when there are none. */
    private static List<Path> listed(Path directory) {
        try (Stream<Path> entries = Files.list(directory)) {
            List<Path> files = entries.filter(Files::isRegularFile)
                    .filter(f -> !f.getFileName().toString().startsWith(".")
                            && !f.getFileName().toString().startsWith("_"))
                    .sorted()
                    .toList();
            if (files.isEmpty()) {
                throw new InvalidSettingException(PATH, "the directory " + directory + " holds no files to read");
            }
            // The directory passed the allowed-directories check; a link in it may point anywhere.
            Path inside = directory.toRealPath();
            for (Path file : files) {
                Path real = file.toRealPath();
                if (!real.startsWith(inside)) {
                    throw new InvalidSettingException(
                            PATH,
                            file + " is a link to " + real + ", outside " + directory
                                    + ": a directory's files are read only from inside it");
                }
            }
            return files;
        } catch (IOException e) {
            throw new InvalidSettingException(PATH, "cannot list " + directory + ": " + e.getMessage(), e);
        }
    }

    /** Extensions of compressed files, which the core does not read. */
    private static final Pattern COMPRESSED = Pattern.compile("(?i)(.+)\\.(gz|gzip|bz2|xz|zst|zstd|lz4|snappy|zip|br)");

    /**
     * A directory's entries (not hidden) other than {@code read}, named for a warning: files of
     * another format and subdirectories (with a trailing /). A compressed file of the format
     * ({@code a.jsonl.gz}) is refused instead: it holds rows the user means to read, which the core
     * cannot decompress, and leaving them out would lose them without a word.
     */
    private static List<String> leftOut(Path directory, String format, List<Path> read) {
        try (Stream<Path> entries = Files.list(directory)) {
            List<Path> others = entries.filter(f -> !f.getFileName().toString().startsWith(".")
                            && !f.getFileName().toString().startsWith("_")
                            && !read.contains(f))
                    .sorted()
                    .toList();
            List<String> names = new ArrayList<>();
            for (Path other : others) {
                String name = other.getFileName().toString();
                Matcher compressed = COMPRESSED.matcher(name);
                if (Files.isRegularFile(other)
                        && compressed.matches()
                        && format.equals(formatOf(Path.of(compressed.group(1))))) {
                    throw new InvalidSettingException(
                            PATH,
                            "the directory " + directory + " holds " + name
                                    + ", a compressed " + format
                                    + " file, which is not read: decompress it, or move it out "
                                    + "of the directory (its rows would be left out)");
                }
                names.add(Files.isDirectory(other) ? name + "/" : name);
            }
            return names;
        } catch (IOException e) {
            throw new InvalidSettingException(PATH, "cannot list " + directory + ": " + e.getMessage(), e);
        }
    }

    /**
     * The one format the extensions of a directory's files name (other files, a README, are not
     * data). Files of two formats are refused: reading the first file's and leaving the others
     * out would drop their rows without a word.
     */
    private static String onlyFormat(Path directory, List<Path> files) {
        Map<String, Path> firstOfFormat = new LinkedHashMap<>();
        for (Path file : files) {
            String format = formatOf(file);
            if (format != null) {
                firstOfFormat.putIfAbsent(format, file.getFileName());
            }
        }
        if (firstOfFormat.size() == 1) {
            return firstOfFormat.keySet().iterator().next();
        }
        if (firstOfFormat.isEmpty()) {
            throw new InvalidSettingException(
                    PATH,
                    "the directory " + directory + " holds no file whose extension names a format ("
                            + FileFormats.EXTENSIONS + "); set format: json, csv or parquet");
        }
        StringBuilder found = new StringBuilder();
        firstOfFormat.forEach((format, file) -> found.append(found.isEmpty() ? "" : ", ")
                .append(format)
                .append(" (")
                .append(file)
                .append(")"));
        throw new InvalidSettingException(
                FORMAT,
                "the directory " + directory + " holds files of several formats: " + found
                        + "; set format: to the one to read (the others are left out)");
    }

    /** The format a file's extension implies, or null. */
    private static String formatOf(Path file) {
        try {
            return FileFormats.resolve(null, file);
        } catch (InvalidSettingException e) {
            return null;
        }
    }

    @Override
    public Schema open(StageContext context) {
        this.context = context;
        if (!Files.isRegularFile(files.get(0))) {
            throw new InvalidSettingException(PATH, "the file " + path + " does not exist");
        }
        if (declared != null) {
            if (format.equals("parquet")) {
                throw new InvalidSettingException(SCHEMA, "a Parquet file carries its own schema; remove `schema:`");
            }
            try {
                schema = ColumnTypes.schema(declared);
            } catch (IllegalArgumentException e) {
                throw new InvalidSettingException(SCHEMA, e.getMessage());
            }
        }
        reader = openFile(files.get(0), schema);
        List<String> warnings = new ArrayList<>(reader.warnings());
        if (!leftOut.isEmpty()) {
            warnings.add("the directory " + path + ": not read (only its " + format
                    + " files are, subdirectories not): "
                    + String.join(", ", leftOut.subList(0, Math.min(leftOut.size(), 10)))
                    + (leftOut.size() > 10 ? " and " + (leftOut.size() - 10) + " more" : ""));
        }
        for (String warning : warnings) {
            try (var pipeline = MDC.putCloseable("pipeline", context.pipelineName());
                    var node = MDC.putCloseable("node", context.nodeName())) {
                LOG.warn("warning: node '{}': {}", context.nodeName(), warning);
            }
        }
        schema = reader.schema();
        restore(context.restoredPositions());
        return schema;
    }

    /**
     * A resumed run (beside a source that resumes, see {@link Type#positionsResumeARun}) goes on
     * in the file the checkpoint was reading, after what it had read there: its rows and rejected
     * records are read again and skipped (the same file reads the same way). Skipping by count
     * would skip other rows in other files, so a file that is gone, shorter or rewritten, or a
     * directory whose files before it changed ({@link FileIdentity}), is refused. A `path` that
     * names another file or directory than the checkpoint's is read from the start.
     */
    private void restore(Map<String, String> restored) {
        String file = restored.get(POSITION_FILE);
        String counted = restored.get(POSITION_READ);
        if (file == null || counted == null) {
            return;
        }
        FileCheckpoint checkpoint = FileCheckpoint.parse(file);
        Matcher counts = READ.matcher(counted);
        if (!counts.matches()) {
            throw new IllegalArgumentException("not a file source position: " + counted);
        }
        for (int i = 0; i < files.size(); i++) {
            if (checkpoint.lengthOf(files.get(i)) >= 0) {
                resumeFile = i;
            }
        }
        Path configured = path.toAbsolutePath().normalize();
        if (resumeFile < 0
                && !checkpoint.path().equals(configured)
                && !checkpoint.path().startsWith(configured)) {
            return; // `path` names another file or directory now: read it from the start
        }
        long length = resumeFile < 0 ? -1 : sizeOf(files.get(resumeFile));
        if (resumeFile < 0 || length < checkpoint.bytes()) {
            throw new InvalidSettingException(
                    PATH,
                    "the last checkpoint was reading " + checkpoint.path() + " (" + checkpoint.bytes()
                            + " bytes), which "
                            + (resumeFile < 0
                                    ? "is no longer among the files of " + path
                                    : "now holds " + length + " bytes")
                            + ": a resumed run cannot tell which of its records it read; restore the file, or drop this "
                            + "source's positions (sluice state delete) to read it again from the start");
        }
        String before = restored.get(POSITION_BEFORE);
        String head = restored.get(POSITION_HEAD);
        if (before != null && !before.equals(FileIdentity.before(files, resumeFile))) {
            throw notTheSame(
                    checkpoint,
                    "the files of " + path + " before it changed since (one added, removed or grown: "
                            + "files are read in name order)");
        }
        if (head != null && !head.equals(FileIdentity.head(files.get(resumeFile), FileIdentity.headLength(head)))) {
            throw notTheSame(checkpoint, "that file was rewritten or replaced since (not only appended to)");
        }
        rowsToSkip = Long.parseLong(counts.group(1));
        rejectedToSkip = Long.parseLong(counts.group(2));
        while (current < resumeFile) {
            nextFile();
        }
    }

    private InvalidSettingException notTheSame(FileCheckpoint checkpoint, String why) {
        return new InvalidSettingException(
                PATH,
                "the last checkpoint was reading " + checkpoint.path() + ", but " + why + ": a resumed run cannot "
                        + "tell which of its records it read; put the files back, give new ones names that sort "
                        + "after it, or drop this source's positions (sluice state delete) to read it all again");
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return -1;
        }
    }

    /** A reader of {@code file}: with {@code schema} (null: inferred, or the Parquet file's). */
    private NativeFileReader openFile(Path file, Schema schema) {
        options.put("path", file.toString());
        try {
            return NativeFileReader.open(context.allocator(), options, schema);
        } catch (NativeException e) {
            throw new InvalidSettingException(PATH, e.getMessage(), e);
        }
    }

    @Override
    public Poll poll(Emitter out) {
        while (true) {
            NativeFileReader.Read read = reader.next();
            while (read == null) {
                if (!nextFile()) {
                    return Poll.END;
                }
                read = reader.next();
            }
            NativeBatch batch = read.batch();
            if (read.errors() != null) {
                try (NativeBatch errors = read.errors()) {
                    rejectUnlessSkipped(errors);
                } catch (RuntimeException e) {
                    batch.close();
                    throw e;
                }
            }
            long rows = batch.rowCount();
            rowsOfFile += rows;
            long skip = Math.min(rowsToSkip, rows);
            rowsToSkip -= skip;
            if (skip == rows) {
                batch.close();
                if (rows == 0 || rowsToSkip == 0) {
                    return Poll.IDLE;
                }
                continue; // a resumed run reads what it skips without pausing between batches
            }
            if (skip > 0) {
                NativeBatch left = batch.slice(skip, rows - skip);
                batch.close();
                batch = left;
            }
            out.emit(batch);
            return Poll.EMITTED;
        }
    }

    /** Hands the batch's malformed records to the error policy, but those a resumed run skips. */
    private void rejectUnlessSkipped(NativeBatch errors) {
        long count = errors.rowCount();
        long skip = Math.min(rejectedToSkip, count);
        rejectedToSkip -= skip;
        rejectedOfFile += count;
        if (skip == 0) {
            reject(errors);
        } else if (skip < count) {
            try (NativeBatch left = errors.slice(skip, count - skip)) {
                reject(left);
            }
        }
    }

    /**
     * Remembers the file being read and how far, for the checkpoint (see {@link #restore}): what
     * a resumed run has yet to skip counts as read, or a checkpoint taken while it skips would
     * go back behind the sinks, which went on from the same checkpoint.
     */
    @Override
    public void onBarrier(Barrier barrier) {
        Path file = files.get(current);
        if (seenIndex != current) {
            // Once per file: the digests cover what it held at its first checkpoint, so a file
            // that grows afterwards (appended to) is still the same file.
            seenBefore = FileIdentity.before(files, current);
            seenHead = FileIdentity.head(files.get(current), FileIdentity.HEAD_BYTES);
            seenIndex = current;
        }
        atBarrier.put(
                barrier.epoch(),
                Map.of(
                        POSITION_FILE,
                        new FileCheckpoint(file, sizeOf(file)).toJson(),
                        POSITION_READ,
                        "{\"rows\": " + (rowsOfFile + rowsToSkip) + ", \"rejected\": "
                                + (rejectedOfFile + rejectedToSkip) + "}",
                        POSITION_BEFORE,
                        seenBefore,
                        POSITION_HEAD,
                        seenHead));
    }

    @Override
    public Map<String, String> positions(long epoch) {
        return atBarrier.getOrDefault(epoch, Map.of());
    }

    @Override
    public void onCheckpointComplete(long epoch) {
        atBarrier.headMap(epoch, true).clear();
    }

    /**
     * Moves on to the directory's next file, if any. JSON and CSV files are read with the first
     * one's schema; a Parquet file carries its own, which must be the first one's.
     */
    private boolean nextFile() {
        if (current + 1 >= files.size()) {
            return false;
        }
        reader.close();
        reader = null;
        Path file = files.get(++current);
        rowsOfFile = 0;
        rejectedOfFile = 0;
        reader = openFile(file, format.equals("parquet") ? null : schema);
        if (!reader.schema().equals(schema)) {
            throw new InvalidSettingException(
                    PATH,
                    file + " has the columns " + reader.schema().getFields() + ", not those of " + files.get(0) + ": "
                            + schema.getFields());
        }
        return true;
    }

    /**
     * Hands every malformed line (line, record, error) to the node's error policy; blank lines,
     * which the core reports with them, are counted as skipped.
     */
    private void reject(NativeBatch errors) {
        try (VectorSchemaRoot root = errors.toVectors(context.allocator())) {
            BigIntVector lines = (BigIntVector) root.getVector("line");
            VarBinaryVector records = (VarBinaryVector) root.getVector("record");
            VarCharVector messages = (VarCharVector) root.getVector("error");
            for (int i = 0; i < root.getRowCount(); i++) {
                if (BLANK_LINE.equals(new String(messages.get(i), StandardCharsets.UTF_8)) && isBlank(records.get(i))) {
                    context.skipped(lines.get(i));
                    continue;
                }
                context.reject(
                        lines.get(i),
                        records.get(i),
                        files.get(current).getFileName() + ":" + lines.get(i) + ": "
                                + new String(messages.get(i), StandardCharsets.UTF_8));
            }
        }
    }

    private static boolean isBlank(byte[] record) {
        for (byte b : record) {
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n' && b != '\f') {
                return false;
            }
        }
        return true;
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.close();
        }
    }
}
