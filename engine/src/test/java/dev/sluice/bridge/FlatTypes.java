package dev.sluice.bridge;

import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;

/** The flat Arrow types the tests of the C Data crossings go through. */
final class FlatTypes {

    private FlatTypes() {}

    /** One of each flat type {@link DirectExport} writes (and {@link CFormat#of} names). */
    static List<ArrowType> written() {
        return List.of(
                new ArrowType.Int(8, true),
                new ArrowType.Int(16, true),
                new ArrowType.Int(32, true),
                new ArrowType.Int(64, true),
                new ArrowType.Int(8, false),
                new ArrowType.Int(16, false),
                new ArrowType.Int(32, false),
                new ArrowType.Int(64, false),
                new ArrowType.FloatingPoint(FloatingPointPrecision.HALF),
                new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE),
                new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE),
                ArrowType.Bool.INSTANCE,
                ArrowType.Utf8.INSTANCE,
                ArrowType.LargeUtf8.INSTANCE,
                ArrowType.Binary.INSTANCE,
                ArrowType.LargeBinary.INSTANCE,
                new ArrowType.FixedSizeBinary(3),
                new ArrowType.Decimal(18, 3, 128),
                new ArrowType.Decimal(40, 5, 256),
                new ArrowType.Date(DateUnit.DAY),
                new ArrowType.Date(DateUnit.MILLISECOND),
                new ArrowType.Time(TimeUnit.SECOND, 32),
                new ArrowType.Time(TimeUnit.MILLISECOND, 32),
                new ArrowType.Time(TimeUnit.MICROSECOND, 64),
                new ArrowType.Time(TimeUnit.NANOSECOND, 64),
                new ArrowType.Timestamp(TimeUnit.SECOND, null),
                new ArrowType.Timestamp(TimeUnit.MILLISECOND, null),
                new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC"),
                new ArrowType.Timestamp(TimeUnit.NANOSECOND, "Europe/Paris"),
                new ArrowType.Duration(TimeUnit.SECOND),
                new ArrowType.Duration(TimeUnit.NANOSECOND),
                new ArrowType.Interval(IntervalUnit.YEAR_MONTH),
                new ArrowType.Interval(IntervalUnit.DAY_TIME),
                new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO));
    }
}
