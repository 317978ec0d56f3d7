package dev.sluice.peers.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QueriesTest {

    private static final String BID_JSON = "{\"auction\":1012,\"bidder\":1001,\"price\":2864,\"channel\":\"channel-1580\","
            + "\"url\":\"https://www.nexmark.com/_cc/gqv/zncl/item.htm?query=1&channel_id=878706688\","
            + "\"dateTime\":\"2023-11-14T22:13:20.001\",\"extra\":\"cacbc\"}";

    private static Bid bid() {
        return Json.bids().deserializer().deserialize("t", BID_JSON.getBytes(StandardCharsets.UTF_8));
    }

    private static String json(Object row) {
        return new String(Json.rowBytes(row), StandardCharsets.UTF_8);
    }

    @Test
    void passThroughKeepsSluicesTimestampText() {
        assertEquals("{\"auction\":1012,\"bidder\":1001,\"price\":2864,\"dateTime\":\"2023-11-14T22:13:20.001\",\"extra\":\"cacbc\"}",
                json(Queries.q0(bid())));
    }

    @Test
    void eurosAreExactDecimals() {
        assertEquals("{\"auction\":1012,\"bidder\":1001,\"price\":2600.512,\"dateTime\":\"2023-11-14T22:13:20.001\",\"extra\":\"cacbc\"}",
                json(Queries.q1(bid())));
        assertEquals("908.000", Queries.euros(1000).toPlainString());
    }

    @Test
    void q14KeepsOnlyTheMiddlePriceBandAndCountsC() {
        assertNull(Queries.q14(bid()));
        Bid rich = new Bid(1, 2, 2_000_000, "Apple", "u", "2023-11-14T07:00:00", "cxc");
        assertEquals("{\"auction\":1,\"bidder\":2,\"price\":1816000.000,\"bidTimeType\":\"otherTime\","
                + "\"dateTime\":\"2023-11-14T07:00:00\",\"extra\":\"cxc\",\"c_counts\":2}", json(Queries.q14(rich)));
        Bid night = new Bid(1, 2, 2_000_000, "Apple", "u", "2023-11-14T22:13:20", "");
        assertEquals("nightTime", ((Queries.Q14) Queries.q14(night)).bidTimeType());
    }

    @Test
    void q21TakesHotChannelsByNameAndOthersFromTheUrl() {
        assertEquals("878706688", ((Queries.Q21) Queries.q21(bid())).channel_id());
        assertEquals("1", ((Queries.Q21) Queries.q21(new Bid(1, 2, 3, "Google", "https://x/y?query=1", "t", ""))).channel_id());
        assertNull(Queries.q21(new Bid(1, 2, 3, "channel-7", "https://x/y?query=1", "t", "")));
        assertEquals("{\"auction\":1012,\"bidder\":1001,\"price\":2864,\"channel\":\"channel-1580\",\"channel_id\":\"878706688\"}",
                json(Queries.q21(bid())));
    }

    @Test
    void q22SplitsLikeFlinksSplitIndex() {
        assertEquals("{\"auction\":1012,\"bidder\":1001,\"price\":2864,\"channel\":\"channel-1580\",\"dir1\":\"_cc\","
                + "\"dir2\":\"gqv\",\"dir3\":\"zncl\"}", json(Queries.q22(bid())));
        assertEquals("", Queries.splitIndex("a//b", '/', 1));
        assertEquals("", Queries.splitIndex("a/b/", '/', 2));
        assertNull(Queries.splitIndex("a/b", '/', 2));
    }

    @Test
    void q13JoinsOnAuctionModulo10000() {
        assertEquals("{\"auction\":1012,\"bidder\":1001,\"price\":2864,\"dateTime\":\"2023-11-14T22:13:20.001\",\"value\":\"v\"}",
                json(Queries.q13(bid(), Map.of(1012L, "v"))));
        assertNull(Queries.q13(bid(), Map.of(12L, "v")));
    }
}
