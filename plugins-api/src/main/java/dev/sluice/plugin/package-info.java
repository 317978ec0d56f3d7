/**
 * The stage SPI of Sluice: what a source, a transform and a sink implement. The built-in
 * connectors implement exactly these interfaces, and so will plugins loaded from a JAR.
 *
 * <p>Ownership of batches: a batch handed to {@link dev.sluice.plugin.Transform#process} or
 * {@link dev.sluice.plugin.Sink#write} is borrowed for the duration of the call; a batch passed
 * to {@link dev.sluice.plugin.Emitter#emit} is handed over to the runtime, which closes it.
 *
 * <p>Lifecycle: {@code open} checks and plans (this is all {@code sluice validate} does, so it
 * has no effect outside the process), {@code start} opens destinations and connections (a
 * run only), then batches and barriers flow, then {@code close}.
 *
 * <p>Threading: the runtime calls a stage from one thread at a time (its lane), so stages need
 * no locks on the hot path.
 */
package dev.sluice.plugin;
