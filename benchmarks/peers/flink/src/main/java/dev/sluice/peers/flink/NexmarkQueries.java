package dev.sluice.peers.flink;

import java.util.Map;
import java.util.Set;

/**
 * The Nexmark queries of the comparison, in Flink SQL over the table {@code bid}. The column
 * names are compared with Sluice's output, so the aliases stay as they are. {@code dateTime},
 * {@code key} and {@code value} are keywords of Flink's SQL parser, hence the backquotes.
 */
final class NexmarkQueries {

    private NexmarkQueries() {}

    /** Queries that join the {@code side_input} table and so need {@code --side-input}. */
    static final Set<String> NEED_SIDE_INPUT = Set.of("q13");

    private static final Map<String, String> SQL = Map.of(
            "q0", "SELECT auction, bidder, price, `dateTime`, extra FROM bid",
            "q1", "SELECT auction, bidder, 0.908 * price AS price, `dateTime`, extra FROM bid",
            "q2", "SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0",
            // A processing-time lookup join of every bid with the side input's row for its key.
            "q13", "SELECT B.auction, B.bidder, B.price, B.`dateTime`, S.`value` "
                    + "FROM (SELECT *, PROCTIME() AS p_time FROM bid) B "
                    + "JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S ON MOD(B.auction, 10000) = S.`key`",
            "q14", "SELECT auction, bidder, 0.908 * price AS price, "
                    + "CASE WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime' "
                    + "WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime' "
                    + "ELSE 'otherTime' END AS bidTimeType, "
                    + "`dateTime`, extra, count_char(extra, 'c') AS c_counts "
                    + "FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000",
            "q21", "SELECT auction, bidder, price, channel, "
                    + "CASE WHEN lower(channel) = 'apple' THEN '0' "
                    + "WHEN lower(channel) = 'google' THEN '1' "
                    + "WHEN lower(channel) = 'facebook' THEN '2' "
                    + "WHEN lower(channel) = 'baidu' THEN '3' "
                    + "ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id "
                    + "FROM bid WHERE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) IS NOT NULL "
                    + "OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')",
            "q22", "SELECT auction, bidder, price, channel, "
                    + "SPLIT_INDEX(url, '/', 3) AS dir1, SPLIT_INDEX(url, '/', 4) AS dir2, "
                    + "SPLIT_INDEX(url, '/', 5) AS dir3 FROM bid");

    static boolean known(String name) {
        return SQL.containsKey(name);
    }

    static String sql(String name) {
        return SQL.get(name);
    }

    static Set<String> names() {
        return new java.util.TreeSet<>(SQL.keySet());
    }
}
