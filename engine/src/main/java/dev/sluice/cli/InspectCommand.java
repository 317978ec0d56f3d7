package dev.sluice.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.googlecode.lanterna.SGR;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.graphics.TextGraphics;
import com.googlecode.lanterna.input.KeyStroke;
import com.googlecode.lanterna.input.KeyType;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.terminal.DefaultTerminalFactory;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice inspect NAME}: a terminal UI over a pipeline's live inspection stream (a served
 * pipeline, or a {@code run --inspect-port}): a tab per node with its row count, the node's
 * sampled rows as pretty JSON, and a status line. Keys: ←/→ or h/l (or Tab) switch nodes, j/k
 * scroll, / search, p pause the view, w open the web page, q quit.
 */
@Command(
        name = "inspect",
        description = "Watch a running pipeline's nodes and the rows flowing through them, in the terminal"
                + " (keys: h/l or ←/→ node, j/k scroll, / search, p pause, w web page, q quit). For a"
                + " `run --inspect-port PORT`, pass --server http://127.0.0.1:PORT.")
final class InspectCommand extends ServiceCommands.ServiceCommand {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** How often the screen is redrawn when no key is pressed (ages and rates move). */
    private static final long REDRAW_MILLIS = 250;

    @Parameters(index = "0", paramLabel = "NAME", description = "The pipeline's name.")
    String name;

    @Override
    int run(ServiceClient client) {
        if (System.console() == null || !System.console().isTerminal()) {
            err.println("error: sluice inspect needs a terminal; for scripts, GET "
                    + client.server().resolve("inspect/" + ServiceClient.segment(name) + "/state"));
            return Main.EXIT_CONFIG;
        }
        InspectModel model = new InspectModel();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> failure = new AtomicReference<>();
        Thread reader = Thread.ofPlatform()
                .daemon()
                .name("sluice-inspect-events")
                .start(() -> {
                    try {
                        int status =
                                client.events("inspect/" + ServiceClient.segment(name) + "/events", (event, data) -> {
                                    try {
                                        if (event.equals("snapshot")) {
                                            model.accept(JSON.readTree(data));
                                        } else if (event.equals("waiting")) {
                                            model.waiting(JSON.readTree(data)
                                                    .path("message")
                                                    .asText());
                                        }
                                    } catch (IOException e) {
                                        failure.set("unreadable event from the server: " + e.getMessage());
                                    }
                                    return !done.get();
                                });
                        if (status != 200) {
                            failure.set("the server answered HTTP " + status
                                    + (status == 401 ? " (pass its token with --token-file)" : ""));
                        } else if (!done.get()) {
                            failure.set("the server closed the stream");
                        }
                    } catch (ServiceClient.UnreachableException e) {
                        failure.set(e.getMessage());
                    }
                });
        String web = client.server()
                .resolve("inspect/" + ServiceClient.segment(name))
                .toString();
        try (Screen screen =
                new DefaultTerminalFactory().setForceTextTerminal(true).createScreen()) {
            screen.startScreen();
            screen.setCursorPosition(null);
            loop(screen, model, web, failure);
        } catch (IOException e) {
            err.println("error: the terminal failed: " + e.getMessage());
            return Main.EXIT_FAILED;
        } finally {
            done.set(true);
            reader.interrupt();
        }
        if (failure.get() != null) {
            err.println("error: " + failure.get());
            return ServiceCommands.EXIT_UNREACHABLE;
        }
        return 0;
    }

    /** Reads keys and redraws until q, or until the stream fails. */
    private void loop(Screen screen, InspectModel model, String web, AtomicReference<String> failure)
            throws IOException {
        StringBuilder searching = null; // non-null while the search is being typed
        String message = "";
        long drawn = 0;
        while (failure.get() == null) {
            KeyStroke key = screen.pollInput();
            if (key == null) {
                if (System.nanoTime() - drawn >= REDRAW_MILLIS * 1_000_000) {
                    draw(screen, model, searching, message);
                    drawn = System.nanoTime();
                }
                try {
                    Thread.sleep(20); // keys feel immediate; the screen is redrawn every REDRAW_MILLIS
                } catch (InterruptedException e) {
                    return;
                }
                continue;
            }
            KeyType type = key.getKeyType();
            Character c = type == KeyType.Character ? key.getCharacter() : null;
            if (searching != null) {
                if (type == KeyType.Enter) {
                    model.search(searching.toString());
                    searching = null;
                } else if (type == KeyType.Escape) {
                    searching = null;
                } else if (type == KeyType.Backspace && !searching.isEmpty()) {
                    searching.setLength(searching.length() - 1);
                } else if (c != null) {
                    searching.append(c);
                }
            } else if (type == KeyType.EOF || (c != null && c == 'q')) {
                return;
            } else if (type == KeyType.ArrowRight || type == KeyType.Tab || (c != null && c == 'l')) {
                model.moveTab(1);
            } else if (type == KeyType.ArrowLeft || type == KeyType.ReverseTab || (c != null && c == 'h')) {
                model.moveTab(-1);
            } else if (type == KeyType.ArrowDown || (c != null && c == 'j')) {
                model.scroll(1);
            } else if (type == KeyType.ArrowUp || (c != null && c == 'k')) {
                model.scroll(-1);
            } else if (type == KeyType.PageDown || (c != null && c == ' ')) {
                model.scroll(screen.getTerminalSize().getRows() - 4);
            } else if (type == KeyType.PageUp) {
                model.scroll(-(screen.getTerminalSize().getRows() - 4));
            } else if (c != null && c == '/') {
                searching = new StringBuilder();
            } else if (c != null && c == 'p') {
                model.togglePause();
            } else if (c != null && c == 'w') {
                message = openBrowser(web);
            }
            draw(screen, model, searching, message);
            drawn = System.nanoTime();
        }
    }

    /** Opens the web page with the desktop's opener if there is one; says where it is either way. */
    private static String openBrowser(String url) {
        for (String opener : List.of("xdg-open", "open")) {
            for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
                if (java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, opener))) {
                    try {
                        new ProcessBuilder(opener, url)
                                .redirectErrorStream(true)
                                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                                .start();
                        return "opened " + url;
                    } catch (IOException e) {
                        return "web page: " + url + " (" + opener + " failed: " + e.getMessage() + ")";
                    }
                }
            }
        }
        return "web page: " + url;
    }

    private void draw(Screen screen, InspectModel model, StringBuilder searching, String message) throws IOException {
        TerminalSize size = screen.doResizeIfNecessary();
        if (size == null) {
            size = screen.getTerminalSize();
        }
        int width = size.getColumns();
        int height = size.getRows();
        screen.clear();
        TextGraphics g = screen.newTextGraphics();
        g.enableModifiers(SGR.BOLD);
        g.putString(0, 0, fit(" sluice inspect · " + name + (model.paused() ? "  [PAUSED]" : ""), width));
        g.disableModifiers(SGR.BOLD);
        int column = 0;
        List<String> tabs = model.tabs();
        for (int i = 0; i < tabs.size() && column < width; i++) {
            boolean selected = i == model.selected();
            String label = selected ? "[" + model.tabLabel(tabs.get(i)) + "]" : " " + model.tabLabel(tabs.get(i)) + " ";
            if (selected) {
                g.enableModifiers(SGR.REVERSE);
            }
            g.putString(column, 1, fit(label, width - column));
            g.disableModifiers(SGR.REVERSE);
            column += label.length() + 1;
        }
        g.putString(0, 2, "─".repeat(width));
        List<String> lines = model.visibleLines();
        for (int row = 3; row < height - 1 && row - 3 < lines.size(); row++) {
            g.putString(0, row, fit(lines.get(row - 3), width));
        }
        String status;
        if (searching != null) {
            status = "/" + searching;
        } else {
            status = model.status(System.currentTimeMillis())
                    + (model.searchText().isEmpty() ? "" : " · search: " + model.searchText())
                    + (message.isEmpty() ? "" : " · " + message)
                    + "   h/l node  j/k scroll  / search  p pause  w web  q quit";
        }
        g.enableModifiers(SGR.REVERSE);
        g.putString(0, height - 1, fit(status, width) + " ".repeat(Math.max(0, width - status.length())));
        g.disableModifiers(SGR.REVERSE);
        screen.refresh();
    }

    private static String fit(String text, int width) {
        return text.length() <= width ? text : text.substring(0, Math.max(0, width));
    }
}
