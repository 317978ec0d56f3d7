package dev.sluice.peers.kstreams;

/**
 * One Nexmark bid as Sluice's generator writes it to Kafka (JSON). {@code dateTime} stays the
 * text Sluice wrote (ISO-8601 local date-time, UTC, milliseconds only when non-zero), so the
 * queries that pass it through write it back unchanged; q14 parses it for the hour.
 */
record Bid(long auction, long bidder, long price, String channel, String url, String dateTime, String extra) {}
