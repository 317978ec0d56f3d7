/**
 * The config-spec part of the stage SPI: a stage type declares its settings with a
 * {@link dev.sluice.plugin.config.ConfigDef} (typed keys, defaults, docs, {@link
 * dev.sluice.plugin.config.Validator validation hooks}) and reads them through {@link
 * dev.sluice.plugin.config.Settings}. Parsing pipeline files, tracking where each value was
 * written and checking paths stay in the engine.
 */
package dev.sluice.plugin.config;
