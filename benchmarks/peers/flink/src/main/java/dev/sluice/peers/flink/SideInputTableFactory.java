package dev.sluice.peers.flink;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;

/**
 * Connector {@code nexmark-side-input}: q13's side input as a lookup table.
 *
 * <p>Why not the built-in {@code filesystem} connector: in Flink 2.2 its table source is a scan
 * source only, so {@code JOIN side_input FOR SYSTEM_TIME AS OF B.p_time} is rejected ("Temporal
 * Table Join requires primary key in versioned table"). A regular join with the bounded file
 * table would run, but keeps every bid in join state; this keeps q13's SQL and its stateless
 * lookup semantics.
 */
public final class SideInputTableFactory implements DynamicTableSourceFactory {

    static final String IDENTIFIER = "nexmark-side-input";
    static final ConfigOption<String> PATH = ConfigOptions.key("path").stringType().noDefaultValue()
            .withDescription("The CSV file of key,value lines.");

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(PATH);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of();
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        DataType columns = context.getPhysicalRowDataType();
        if (!DataType.getFieldNames(columns).equals(List.of("key", "value"))
                || !DataType.getFieldDataTypes(columns).stream().map(t -> t.getLogicalType().getTypeRoot()).toList()
                        .equals(List.of(LogicalTypeRoot.BIGINT, LogicalTypeRoot.VARCHAR))) {
            throw new ValidationException(IDENTIFIER + " needs the columns (key BIGINT, value STRING), not " + columns);
        }
        return new Source(Path.of(helper.getOptions().get(PATH)));
    }

    /** Looks rows up by {@code key}, the only lookup key it accepts. */
    private record Source(Path csv) implements LookupTableSource {

        @Override
        public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
            int[][] keys = context.getKeys();
            if (keys.length != 1 || keys[0].length != 1 || keys[0][0] != 0) {
                throw new ValidationException(IDENTIFIER + " is looked up by `key` alone");
            }
            return LookupFunctionProvider.of(new SideInputLookup(csv));
        }

        @Override
        public DynamicTableSource copy() {
            return new Source(csv);
        }

        @Override
        public String asSummaryString() {
            return IDENTIFIER + "(" + csv + ")";
        }
    }
}
