package dev.sluice.cli;

import ch.qos.logback.classic.Level;
import dev.sluice.config.ConfigException;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.StageTypes;
import dev.sluice.service.InvalidPipelineException;
import dev.sluice.service.PipelineService;
import dev.sluice.service.ServiceApi;
import dev.sluice.state.StateException;
import dev.sluice.state.StateStore;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code sluice serve}: a long-lived service hosting many pipelines behind the HTTP API of
 * {@link ServiceApi}. SIGTERM or Ctrl-C stops every pipeline with a final checkpoint and keeps
 * what should run, so the next start resumes it.
 */
@Command(
        name = "serve",
        description = "Host pipelines behind an HTTP API: apply, pause, resume and delete them (sluice apply ...).")
final class ServeCommand implements Callable<Integer> {

    static final int DEFAULT_PORT = 7878;

    @Option(
            names = "--state-dir",
            paramLabel = "DIR",
            description = "The service's state DB: definitions, lifecycle state and every pipeline's positions. "
                    + "Default: .sluice/service.")
    Path stateDir = Path.of(".sluice", "service");

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address to listen on. Default: 127.0.0.1.")
    String host = "127.0.0.1";

    @Option(
            names = "--port",
            paramLabel = "PORT",
            description = "Port to listen on (0: any free one). Default: " + DEFAULT_PORT + ".")
    int port = DEFAULT_PORT;

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            description = "A file holding the bearer token every request must carry; required beyond loopback.")
    Path tokenFile;

    @Option(
            names = "--base-dir",
            paramLabel = "DIR",
            description = "What relative paths in applied pipelines are relative to. Default: the working directory.")
    Path baseDir = Path.of("");

    @Option(
            names = "--apply-dir",
            paramLabel = "DIR",
            description = "Apply every *.yaml in DIR at start (e.g. a Kubernetes ConfigMap): an identical one is a "
                    + "no-op, a changed one restarts that pipeline from its checkpoint.")
    Path applyDir;

    @Mixin
    CommonOptions options;

    @Override
    public Integer call() {
        options.apply();
        PrintStream err = options.err(Level.ERROR, null);
        PrintStream info = options.err(Level.INFO, null);
        String token;
        try {
            token = tokenFile == null ? null : readToken(tokenFile);
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            return Main.EXIT_CONFIG;
        }
        StateStore store;
        try {
            store = StateStore.open(stateDir);
        } catch (StateException e) {
            err.println("error: " + e.getMessage());
            return Main.EXIT_CONFIG;
        }
        PipelineService service = new PipelineService(store, StageTypes.installed(), baseDir, null);
        ServiceApi api;
        try {
            api = ServiceApi.start(service, host, port, token);
        } catch (RuntimeException e) {
            service.close();
            options.report(err, "error: cannot serve on " + host + ":" + port + ": ", e);
            return Main.EXIT_CONFIG;
        }
        AtomicBoolean stop = new AtomicBoolean();
        StopSignals signals = StopSignals.install(stop, "service");
        try {
            info.printf(
                    "sluice service listening on http://%s:%d (state DB %s)%n",
                    host, api.port(), stateDir.toAbsolutePath());
            // Ready (the readiness probe) only once the --apply-dir pipelines are applied too.
            if (!service.boot(() -> applyDir == null || applyAll(service, applyDir, err, info))) {
                return Main.EXIT_CONFIG;
            }
            info.printf("sluice service ready: %d pipelines%n", service.list().size());
            while (!stop.get()) {
                LockSupport.parkNanos(100_000_000);
            }
            info.println("sluice service stopping: every pipeline takes a final checkpoint");
            return 0;
        } catch (RuntimeException e) {
            options.report(err, "error: ", e);
            return Main.EXIT_FAILED;
        } finally {
            api.close();
            service.close();
            signals.close();
        }
    }

    /** Applies each pipeline file in {@code dir}; false (after saying why) if one is refused. */
    private static boolean applyAll(PipelineService service, Path dir, PrintStream err, PrintStream info) {
        List<Path> files;
        try (Stream<Path> listing = Files.list(dir)) {
            files = listing.filter(file ->
                            file.toString().endsWith(".yaml") || file.toString().endsWith(".yml"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            err.println("error: --apply-dir " + dir + ": " + e.getMessage());
            return false;
        }
        boolean ok = true;
        for (Path file : files) {
            try {
                String yaml = PipelineLoader.read(file);
                String name = ServiceCommands.Apply.nameOf(yaml, file);
                info.printf(
                        "%s: pipeline '%s' %s%n",
                        file, name, service.apply(name, yaml).name().toLowerCase(Locale.ROOT));
            } catch (ConfigException e) {
                err.println("error: " + e.getMessage());
                ok = false;
            } catch (InvalidPipelineException e) {
                e.problems().forEach(problem -> err.println("error: " + problem + " (from " + file + ")"));
                ok = false;
            }
        }
        return ok;
    }

    private static String readToken(Path file) {
        try {
            String token = Files.readString(file).strip();
            if (token.isEmpty()) {
                throw new IllegalArgumentException(file + ": the token file is empty");
            }
            return token;
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot read the token file: " + e.getMessage(), e);
        }
    }
}
