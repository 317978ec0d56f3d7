package dev.sluice.pluginhost;

import dev.sluice.plugin.StageContext;

/**
 * What the engine's {@link StageContext} adds for plugin stages: the pipeline's {@code plugins:}
 * settings. A plugin stage opened outside the engine (a unit test's own context) gets the
 * defaults for its pipeline directory.
 */
public interface PluginContext {

    PipelinePlugins plugins();

    /** The pipeline's plugins as {@code context} knows them. */
    static PipelinePlugins of(StageContext context) {
        return context instanceof PluginContext host
                ? host.plugins()
                : PipelinePlugins.defaults(context.pipelineDirectory());
    }
}
