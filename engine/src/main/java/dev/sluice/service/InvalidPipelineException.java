package dev.sluice.service;

import java.util.List;

/**
 * A definition the service refuses (HTTP 422, CLI exit 2): each problem reads as {@code sluice
 * validate} prints it, {@code file:line:col: node: reason}, with secrets masked.
 */
public final class InvalidPipelineException extends RuntimeException {

    private final List<String> problems;

    InvalidPipelineException(List<String> problems) {
        super(String.join("\n", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
