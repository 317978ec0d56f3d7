package dev.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.PipelineLoader;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The commands that operate a running {@code sluice serve}: apply, pause, resume, delete, list,
 * status, logs. Exit codes: 0 ok, 1 the service failed the operation, 2 invalid input, 3 no such
 * pipeline, 4 the service cannot be reached.
 */
final class ServiceCommands {

    static final int EXIT_NOT_FOUND = 3;
    static final int EXIT_UNREACHABLE = 4;

    private ServiceCommands() {}

    /** Where the service is and how to print its answers. */
    static final class ServiceOptions {

        @Option(
                names = "--server",
                paramLabel = "URL",
                description = "The service's address. Default: $SLUICE_SERVER, else http://127.0.0.1:"
                        + ServeCommand.DEFAULT_PORT + ".")
        String server;

        @Option(
                names = "--token-file",
                paramLabel = "FILE",
                description = "A file holding the service's bearer token. Default: $SLUICE_TOKEN_FILE, if set.")
        Path tokenFile;

        @Option(
                names = {"-o", "--output"},
                paramLabel = "table|json",
                description = "Human-readable text (default) or the service's JSON, for scripts.")
        String output = "table";

        ServiceClient client() {
            String address = server != null ? server : System.getenv("SLUICE_SERVER");
            if (address == null || address.isBlank()) {
                address = "http://127.0.0.1:" + ServeCommand.DEFAULT_PORT;
            }
            if (!address.contains("://")) {
                address = "http://" + address;
            }
            URI uri;
            try {
                uri = URI.create(address.endsWith("/") ? address : address + "/");
            } catch (IllegalArgumentException e) {
                throw new UsageException("--server " + address + " is not a URL such as http://127.0.0.1:7878");
            }
            Path tokens = tokenFile;
            if (tokens == null && System.getenv("SLUICE_TOKEN_FILE") != null) {
                tokens = Path.of(System.getenv("SLUICE_TOKEN_FILE"));
            }
            String token = null;
            if (tokens != null) {
                try {
                    token = Files.readString(tokens).strip();
                } catch (IOException e) {
                    throw new UsageException(tokens + ": cannot read the token file: " + e.getMessage());
                }
            }
            return new ServiceClient(uri, token);
        }

        boolean json() {
            return output.equals("json");
        }
    }

    /** Bad input on the command line (exit 2). */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    /** The shared frame: the call, the answer's exit code, errors said once, on stderr. */
    abstract static class ServiceCommand implements Callable<Integer> {

        @Mixin
        ServiceOptions service;

        PrintStream out = System.out;
        PrintStream err = System.err;

        abstract int run(ServiceClient client);

        @Override
        public final Integer call() {
            try {
                if (!service.output.equals("table") && !service.output.equals("json")) {
                    throw new UsageException("--output must be table or json, got '" + service.output + "'");
                }
                return run(service.client());
            } catch (UsageException e) {
                err.println("error: " + e.getMessage());
                return Main.EXIT_CONFIG;
            } catch (ServiceClient.UnreachableException e) {
                err.println("error: " + e.getMessage());
                return EXIT_UNREACHABLE;
            }
        }

        /** Prints the answer: its JSON with --output json, else {@code table} of it; returns the exit code. */
        int answer(ServiceClient.Answer answer, java.util.function.Consumer<JsonNode> table) {
            if (!answer.ok()) {
                return failure(answer);
            }
            if (service.json()) {
                out.println(answer.body().toPrettyString());
            } else {
                table.accept(answer.body());
            }
            return 0;
        }

        int failure(ServiceClient.Answer answer) {
            JsonNode body = answer.body();
            if (service.json()) {
                out.println(body.toPrettyString());
            }
            String message = body.path("error").asText("HTTP " + answer.status());
            err.println("error: " + message);
            body.path("problems").forEach(problem -> err.println("  " + problem.asText()));
            return switch (answer.status()) {
                case 404 -> EXIT_NOT_FOUND;
                case 400, 413, 422 -> Main.EXIT_CONFIG;
                case 401 -> {
                    err.println("  pass the service's token with --token-file FILE (or SLUICE_TOKEN_FILE)");
                    yield Main.EXIT_CONFIG;
                }
                default -> Main.EXIT_FAILED;
            };
        }

        static String pipelinePath(String name) {
            return "pipelines/" + ServiceClient.segment(name);
        }

        void printStatus(JsonNode status) {
            out.printf("%-16s %s%n", "name", status.path("name").asText());
            out.printf("%-16s %s%n", "state", status.path("state").asText());
            out.printf(
                    "%-16s %d (applied %s)%n",
                    "version",
                    status.path("version").asLong(),
                    status.path("applied_at").asText("-"));
            out.printf("%-16s %s%n", "started", status.path("started_at").asText("-"));
            out.printf(
                    Locale.ROOT,
                    "%-16s in %,d | out %,d | rejected %,d | %,.0f rows/s%n",
                    "records",
                    status.path("records_in").asLong(),
                    status.path("records_out").asLong(),
                    status.path("rejected").asLong(),
                    status.path("rows_per_second").asDouble());
            JsonNode checkpoint = status.path("last_checkpoint");
            out.printf(
                    "%-16s epoch %d at %s%n",
                    "last checkpoint",
                    checkpoint.path("epoch").asLong(),
                    checkpoint.path("at").asText("-"));
            JsonNode policy = status.path("restart_policy");
            out.printf(
                    "%-16s %d (policy: at most %d in a row, backoff %d ms)%n",
                    "restarts",
                    status.path("restarts").asInt(),
                    policy.path("max_attempts").asInt(),
                    policy.path("backoff_ms").asLong());
            JsonNode error = status.path("last_error");
            if (!error.path("message").isNull() && !error.path("message").isMissingNode()) {
                out.printf(
                        "%-16s %s (at %s)%n",
                        "last error",
                        error.path("message").asText(),
                        error.path("at").asText("-"));
            }
        }
    }

    @Command(name = "apply", description = "Create or update a pipeline on the service from its YAML file.")
    static final class Apply extends ServiceCommand {

        @Option(
                names = {"-f", "--file"},
                required = true,
                paramLabel = "PIPELINE.yaml",
                description = "The pipeline file.")
        Path file;

        @Override
        int run(ServiceClient client) {
            String yaml;
            try {
                yaml = PipelineLoader.read(file);
            } catch (ConfigException e) {
                throw new UsageException(e.getMessage());
            }
            String name = nameOf(yaml, file);
            ServiceClient.Answer answer = client.put(pipelinePath(name), yaml);
            return answer(
                    answer,
                    body -> out.printf(
                            "pipeline '%s' %s (version %d, %s)%n",
                            name,
                            body.path("applied").asText(),
                            body.path("status").path("version").asLong(),
                            body.path("status").path("state").asText()));
        }

        /** The pipeline's name: its {@code name:}, else the file name without extension (as {@code run}). */
        static String nameOf(String yaml, Path file) {
            ConfigValue name = PipelineLoader.rawTopLevel(yaml, file, "name");
            if (name != null && name.value() instanceof String text && !text.isBlank()) {
                return text;
            }
            String fileName = file.getFileName().toString();
            int dot = fileName.lastIndexOf('.');
            return dot > 0 ? fileName.substring(0, dot) : fileName;
        }
    }

    /** A POST to {@code pipelines/NAME/ACTION} that answers with the pipeline's status. */
    abstract static class LifecycleCommand extends ServiceCommand {

        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        abstract String action();

        @Override
        int run(ServiceClient client) {
            return answer(
                    client.post(pipelinePath(name) + "/" + action()),
                    body -> out.printf(
                            "pipeline '%s' %s%n", name, body.path("state").asText()));
        }
    }

    @Command(name = "pause", description = "Pause a pipeline on the service: final checkpoint, stop, keep its state.")
    static final class Pause extends LifecycleCommand {
        @Override
        String action() {
            return "pause";
        }
    }

    @Command(
            name = "resume",
            description = "Resume a paused (or failed) pipeline on the service from its last checkpoint.")
    static final class Resume extends LifecycleCommand {
        @Override
        String action() {
            return "resume";
        }
    }

    @Command(name = "delete", description = "Stop a pipeline on the service and drop its definition and state.")
    static final class Delete extends ServiceCommand {

        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Option(names = "--yes", description = "Do not ask for confirmation.")
        boolean yes;

        @Override
        int run(ServiceClient client) {
            if (!yes && !confirmed()) {
                return Main.EXIT_CONFIG;
            }
            return answer(client.delete(pipelinePath(name)), body -> out.printf("pipeline '%s' deleted%n", name));
        }

        private boolean confirmed() {
            // Since Java 22 there is a console object even when stdin is a pipe: ask only a terminal.
            if (System.console() == null || !System.console().isTerminal()) {
                err.println("error: not deleting pipeline '" + name + "' without confirmation: pass --yes");
                return false;
            }
            err.printf("Delete pipeline '%s' and its state (checkpointed positions)? [y/N] ", name);
            try {
                String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                if (line != null
                        && (line.strip().equalsIgnoreCase("y") || line.strip().equalsIgnoreCase("yes"))) {
                    return true;
                }
            } catch (IOException e) {
                // No answer is a no.
            }
            err.println("not deleted");
            return false;
        }
    }

    @Command(name = "list", description = "List the service's pipelines.")
    static final class ListPipelines extends ServiceCommand {

        @Override
        int run(ServiceClient client) {
            return answer(client.get("pipelines"), body -> {
                List<String[]> rows = new ArrayList<>();
                rows.add(new String[] {"NAME", "STATE", "VERSION", "IN", "OUT", "ROWS/S", "CHECKPOINT", "RESTARTS"});
                for (JsonNode status : body.path("pipelines")) {
                    rows.add(new String[] {
                        status.path("name").asText(),
                        status.path("state").asText(),
                        status.path("version").asText(),
                        String.format(
                                Locale.ROOT, "%,d", status.path("records_in").asLong()),
                        String.format(
                                Locale.ROOT, "%,d", status.path("records_out").asLong()),
                        String.format(
                                Locale.ROOT,
                                "%,.0f",
                                status.path("rows_per_second").asDouble()),
                        status.path("last_checkpoint").path("epoch").asText(),
                        status.path("restarts").asText()
                    });
                }
                if (rows.size() == 1) {
                    out.println("no pipelines; add one with `sluice apply -f PIPELINE.yaml`");
                    return;
                }
                printTable(rows);
            });
        }

        private void printTable(List<String[]> rows) {
            int[] widths = new int[rows.getFirst().length];
            for (String[] row : rows) {
                for (int i = 0; i < row.length; i++) {
                    widths[i] = Math.max(widths[i], row[i].length());
                }
            }
            for (String[] row : rows) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < row.length; i++) {
                    line.append(String.format("%-" + widths[i] + "s", row[i]));
                    if (i + 1 < row.length) {
                        line.append("  ");
                    }
                }
                out.println(line.toString().stripTrailing());
            }
        }
    }

    @Command(name = "status", description = "Show one pipeline's status on the service.")
    static final class Status extends ServiceCommand {

        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        int run(ServiceClient client) {
            return answer(client.get(pipelinePath(name)), this::printStatus);
        }
    }

    @Command(name = "logs", description = "Print a pipeline's recent log lines from the service.")
    static final class Logs extends ServiceCommand {

        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Option(
                names = {"-f", "--follow"},
                description = "Keep printing new lines until Ctrl-C.")
        boolean follow;

        @Override
        int run(ServiceClient client) {
            long since = 0;
            while (true) {
                ServiceClient.Answer answer = client.get(pipelinePath(name) + "/logs?since=" + since);
                if (!answer.ok()) {
                    return failure(answer);
                }
                for (JsonNode line : answer.body().path("lines")) {
                    if (service.json()) {
                        out.println(line.toString());
                    } else {
                        out.println(line.path("at").asText() + " "
                                + line.path("text").asText());
                    }
                }
                out.flush();
                since = answer.body().path("next").asLong(since);
                if (!follow) {
                    return 0;
                }
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return 0;
                }
            }
        }
    }
}
