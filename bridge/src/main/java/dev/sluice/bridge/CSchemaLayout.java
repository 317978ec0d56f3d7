package dev.sluice.bridge;

/**
 * The layout of the C Data Interface's {@code struct ArrowSchema}, from the generated bindings:
 * its size and field offsets, and the nullable flag. Constants only, so the classes on a run's
 * start path ({@link CSchemas}, {@link ArrowC}) can share them with {@link DirectExport} without
 * initializing it (its initialization makes upcall stubs).
 */
public final class CSchemaLayout {

    /** Size of {@code struct ArrowSchema} (72 bytes). */
    public static final long SIZE = dev.sluice.ffm.ArrowSchema.sizeof();

    static final long FORMAT = dev.sluice.ffm.ArrowSchema.format$offset();
    static final long NAME = dev.sluice.ffm.ArrowSchema.name$offset();
    static final long METADATA = dev.sluice.ffm.ArrowSchema.metadata$offset();
    static final long FLAGS = dev.sluice.ffm.ArrowSchema.flags$offset();
    static final long N_CHILDREN = dev.sluice.ffm.ArrowSchema.n_children$offset();
    static final long CHILDREN = dev.sluice.ffm.ArrowSchema.children$offset();
    static final long DICTIONARY = dev.sluice.ffm.ArrowSchema.dictionary$offset();
    static final long RELEASE = dev.sluice.ffm.ArrowSchema.release$offset();
    static final long PRIVATE_DATA = dev.sluice.ffm.ArrowSchema.private_data$offset();

    /** {@code ARROW_FLAG_NULLABLE}. */
    static final long FLAG_NULLABLE = 2;

    private CSchemaLayout() {}
}
