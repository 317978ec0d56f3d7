package dev.sluice.service;

/** No pipeline of that name is applied to the service (HTTP 404, CLI exit 3). */
final class PipelineNotFoundException extends RuntimeException {

    PipelineNotFoundException(String name) {
        super("no pipeline named '" + name + "'; `sluice list` shows the applied ones");
    }
}
