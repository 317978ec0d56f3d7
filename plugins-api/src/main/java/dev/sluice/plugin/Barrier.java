package dev.sluice.plugin;

/**
 * A checkpoint barrier. It travels behind the batches of its epoch through every stage in
 * order; a sink that receives it must make everything it received before durable.
 *
 * @param epoch the checkpoint epoch, increasing from 1
 * @param last  true for the barrier after the end of bounded input or on a graceful stop
 */
public record Barrier(long epoch, boolean last) {}
