package dev.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.config.StageTypes;
import dev.sluice.state.StateStore;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The inspect page in a real headless Chromium (Debian's chromium and chromium-driver, which
 * {@code ci/ui-tools.sh} installs; nothing downloads a browser): against a pipeline the service
 * runs, the graph shows every node and edge, and new sampled rows of the selected node appear.
 * {@code ci/test.sh} sets {@code SLUICE_UI_TESTS_REQUIRED}, so there a missing browser fails the
 * test instead of skipping it. With {@code -Dsluice.inspect.screenshot=PATH} the page is saved there
 * (docs/inspect.png comes from it).
 */
class InspectPageTest {

    @TempDir
    Path dir;

    @Test
    void theGraphShowsEveryNodeAndNewRowsAppear() throws Exception {
        Path browser = Path.of(envOr("SLUICE_CHROMIUM", "/usr/bin/chromium"));
        Path driverBinary = Path.of(envOr("SLUICE_CHROMEDRIVER", "/usr/bin/chromedriver"));
        boolean present = Files.isExecutable(browser) && Files.isExecutable(driverBinary);
        if (System.getenv("SLUICE_UI_TESTS_REQUIRED") != null) {
            assertTrue(
                    present,
                    "no Chromium at " + browser + " or ChromeDriver at " + driverBinary
                            + " (ci/ui-tools.sh ensure installs them)");
        }
        Assumptions.assumeTrue(present, "Chromium is not installed (ci/ui-tools.sh ensure)");

        PipelineService service =
                new PipelineService(StateStore.open(dir.resolve("state")), StageTypes.installed(), dir, System.err);
        ServiceApi api = ServiceApi.start(service, "127.0.0.1", 0, null);
        ChromeDriver chrome = null;
        try {
            service.boot();
            service.apply("bids", InspectTest.PIPELINE);
            ChromeOptions options = new ChromeOptions();
            options.setBinary(browser.toFile());
            // This machine has no network: without these, Chromium keeps trying to reach Google.
            options.addArguments(
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--window-size=1400,800",
                    "--user-data-dir=" + Files.createDirectory(dir.resolve("chromium-profile")));
            ChromeDriverService driverService = new ChromeDriverService.Builder()
                    .usingDriverExecutable(driverBinary.toFile())
                    .usingAnyFreePort()
                    .build();
            chrome = new ChromeDriver(driverService, options);
            chrome.get("http://127.0.0.1:" + api.port() + "/inspect/bids");
            WebDriverWait wait = new WebDriverWait(chrome, Duration.ofSeconds(60));
            wait.ignoring(StaleElementReferenceException.class); // the graph's labels are redrawn every second
            ChromeDriver page = chrome;

            // Every node in the graph, and the two edges between them.
            wait.until(d -> d.findElements(By.cssSelector("#graph g.node")).size() == 3);
            List<String> nodes = chrome.findElements(By.cssSelector("#graph g.node")).stream()
                    .map(e -> e.getDomAttribute("data-node"))
                    .toList();
            assertEquals(List.of("bids", "pricey", "out"), nodes);
            List<String> edges = chrome.findElements(By.cssSelector("#graph g.edge")).stream()
                    .map(e -> e.getDomAttribute("data-from") + "->" + e.getDomAttribute("data-to"))
                    .toList();
            assertEquals(List.of("bids->pricey", "pricey->out"), edges);
            // Rates on the edges once two snapshots arrived.
            wait.until(d -> d.findElement(By.cssSelector("#graph g.edge[data-from='bids'] text"))
                    .getText()
                    .endsWith("rows/s"));

            // Select the filter: its rows are listed, and newer ones arrive while we look.
            chrome.findElement(By.cssSelector("#graph g.node[data-node='pricey'] rect"))
                    .click();
            wait.until(d -> d.findElement(By.id("rows-title")).getText().equals("Sampled rows of pricey"));
            wait.until(d -> !d.findElements(By.cssSelector("#rows .row")).isEmpty());
            long first = newestSeq(page);
            // Read in one script: the list is redrawn whenever rows arrive, which would leave an
            // element found a moment earlier stale.
            String firstRow =
                    (String) chrome.executeScript("return document.querySelector('#rows .row pre').textContent");
            assertTrue(firstRow.contains("\"price\"") && firstRow.contains("\"url\": \"****\""), firstRow);
            wait.until(d -> newestSeq(page) > first);

            File shot = chrome.getScreenshotAs(OutputType.FILE);
            String keep = System.getProperty("sluice.inspect.screenshot");
            if (keep != null && !keep.isBlank()) {
                Files.copy(shot.toPath(), Path.of(keep), StandardCopyOption.REPLACE_EXISTING);
            }
            assertTrue(Files.size(shot.toPath()) > 10_000, "a screenshot of the page");
        } finally {
            if (chrome != null) {
                chrome.quit();
            }
            api.close();
            service.close();
        }
    }

    /** The highest sequence number among the listed rows, read in one script (see above). */
    private static long newestSeq(ChromeDriver chrome) {
        Object newest = chrome.executeScript("return Math.max(-1, ...[...document.querySelectorAll('#rows .row')]"
                + ".map(r => Number(r.dataset.seq)))");
        return ((Number) newest).longValue();
    }

    private static String envOr(String name, String otherwise) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? otherwise : value;
    }
}
