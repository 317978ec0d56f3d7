package dev.sluice.peers.kstreams;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.kstream.KStream;

/**
 * The Nexmark queries as Kafka Streams DSL over parsed bids. Each output row is a Java record
 * whose component names are exactly the SQL column aliases (they become the JSON keys).
 */
final class Queries {

    static final Set<String> NAMES = Set.of("q0", "q1", "q2", "q13", "q14", "q21", "q22");

    /** Nexmark's dollar-to-euro rate; a decimal, as in SQL, so 0.908 * price has no binary float error. */
    static final BigDecimal EURO_RATE = new BigDecimal("0.908");

    private Queries() {}

    /** The topology step for {@code query}; {@code sideTable} is q13's side input (key -> value). */
    static Function<KStream<byte[], Bid>, KStream<byte[], Object>> of(String query, Map<Long, String> sideTable) {
        return switch (query) {
            case "q0" -> bids -> bids.mapValues(Queries::q0);
            case "q1" -> bids -> bids.mapValues(Queries::q1);
            case "q2" -> bids -> bids.filter((key, bid) -> bid.auction() % 123 == 0).mapValues(Queries::q2);
            case "q13" -> bids -> bids.flatMapValues(bid -> optional(q13(bid, sideTable)));
            case "q14" -> bids -> bids.flatMapValues(bid -> optional(q14(bid)));
            case "q21" -> bids -> bids.flatMapValues(bid -> optional(q21(bid)));
            case "q22" -> bids -> bids.mapValues(Queries::q22);
            default -> throw new IllegalArgumentException("unknown query '" + query + "'; known: " + NAMES);
        };
    }

    private static List<Object> optional(Object row) {
        return row == null ? List.of() : List.of(row);
    }

    // q0: SELECT auction, bidder, price, dateTime, extra FROM bid
    record Q0(long auction, long bidder, long price, String dateTime, String extra) {}

    static Object q0(Bid b) {
        return new Q0(b.auction(), b.bidder(), b.price(), b.dateTime(), b.extra());
    }

    // q1: SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid
    record Q1(long auction, long bidder, BigDecimal price, String dateTime, String extra) {}

    static Object q1(Bid b) {
        return new Q1(b.auction(), b.bidder(), euros(b.price()), b.dateTime(), b.extra());
    }

    // q2: SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0 (the filter is in the topology)
    record Q2(long auction, long price) {}

    static Object q2(Bid b) {
        return new Q2(b.auction(), b.price());
    }

    // q13: SELECT auction, bidder, price, dateTime, value FROM bid JOIN side_input ON MOD(auction, 10000) = key
    record Q13(long auction, long bidder, long price, String dateTime, String value) {}

    static Object q13(Bid b, Map<Long, String> sideTable) {
        String value = sideTable.get(b.auction() % 10_000);
        return value == null ? null : new Q13(b.auction(), b.bidder(), b.price(), b.dateTime(), value);
    }

    // q14: auction, bidder, 0.908 * price AS price, bidTimeType, dateTime, extra, count_char(extra, 'c') AS c_counts
    //      WHERE 1000000 < 0.908 * price < 50000000
    record Q14(long auction, long bidder, BigDecimal price, String bidTimeType, String dateTime, String extra, long c_counts) {}

    private static final BigDecimal Q14_LOW = BigDecimal.valueOf(1_000_000);
    private static final BigDecimal Q14_HIGH = BigDecimal.valueOf(50_000_000);

    static Object q14(Bid b) {
        BigDecimal price = euros(b.price());
        if (price.compareTo(Q14_LOW) <= 0 || price.compareTo(Q14_HIGH) >= 0) {
            return null;
        }
        int hour = LocalDateTime.parse(b.dateTime()).getHour();
        String bidTimeType = hour >= 8 && hour <= 18 ? "dayTime" : hour <= 6 || hour >= 20 ? "nightTime" : "otherTime";
        return new Q14(b.auction(), b.bidder(), price, bidTimeType, b.dateTime(), b.extra(), countChar(b.extra(), 'c'));
    }

    // q21: auction, bidder, price, channel, channel_id (hot channels by name, else from the url)
    //      WHERE the url has a channel_id OR lower(channel) is a hot channel
    record Q21(long auction, long bidder, long price, String channel, String channel_id) {}

    private static final Pattern CHANNEL_ID = Pattern.compile("(&|^)channel_id=([^&]*)");

    static Object q21(Bid b) {
        String id = switch (b.channel().toLowerCase(Locale.ROOT)) {
            case "apple" -> "0";
            case "google" -> "1";
            case "facebook" -> "2";
            case "baidu" -> "3";
            default -> {
                // REGEXP_EXTRACT(url, pattern, 2): the first match's group 2, null when none.
                Matcher m = CHANNEL_ID.matcher(b.url());
                yield m.find() ? m.group(2) : null;
            }
        };
        return id == null ? null : new Q21(b.auction(), b.bidder(), b.price(), b.channel(), id);
    }

    // q22: auction, bidder, price, channel, SPLIT_INDEX(url, '/', 3|4|5) AS dir1|dir2|dir3
    record Q22(long auction, long bidder, long price, String channel, String dir1, String dir2, String dir3) {}

    static Object q22(Bid b) {
        String url = b.url();
        return new Q22(b.auction(), b.bidder(), b.price(), b.channel(),
                splitIndex(url, '/', 3), splitIndex(url, '/', 4), splitIndex(url, '/', 5));
    }

    static BigDecimal euros(long price) {
        return EURO_RATE.multiply(BigDecimal.valueOf(price));
    }

    static long countChar(String s, char c) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == c) {
                n++;
            }
        }
        return n;
    }

    /** Flink's SPLIT_INDEX: the 0-based {@code index}-th field of {@code s} split on {@code sep}, empty fields kept; null when out of range. */
    static String splitIndex(String s, char sep, int index) {
        int start = 0;
        for (int field = 0; field < index; field++) {
            int next = s.indexOf(sep, start);
            if (next < 0) {
                return null;
            }
            start = next + 1;
        }
        int end = s.indexOf(sep, start);
        return s.substring(start, end < 0 ? s.length() : end);
    }
}
