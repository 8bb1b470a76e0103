package dev.runner.local;

import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Debian's headless Chromium driven through its chromedriver, for the console's browser tests.
 * When either is missing, {@code .ci/install-chromium} installs them (CI runs as root); when that
 * cannot, the calling tests are skipped with the reason, not failed. Nothing is downloaded by
 * Selenium itself: both binaries are given explicitly, so Selenium Manager never runs.
 */
final class HeadlessChromium implements AutoCloseable {

    private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(10);

    private final ChromeDriver driver;
    private final Path profile;
    private final Path screenshots;

    private HeadlessChromium(ChromeDriver driver, Path profile, Path screenshots) {
        this.driver = driver;
        this.profile = profile;
        this.screenshots = screenshots;
    }

    /**
     * A fresh browser with an empty profile, and an emptied screenshots folder (what is there is
     * this run's); skips the calling test class when Chromium cannot be had.
     */
    static HeadlessChromium start(Path screenshots) {
        installIfMissing();
        Path chromium = onPath("chromium").orElseThrow();
        Path chromedriver = onPath("chromedriver").orElseThrow();
        try {
            Path profile = Files.createTempDirectory("runner-console-chromium-");
            ChromeOptions options = new ChromeOptions()
                    .setBinary(chromium.toFile())
                    .addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            "--disable-dev-shm-usage", "--window-size=1280,900", "--user-data-dir=" + profile);
            // The page's console messages (script errors, policy violations) for the tests to read.
            options.setCapability("goog:loggingPrefs", Map.of("browser", "ALL"));
            ChromeDriverService service = new ChromeDriverService.Builder()
                    .usingDriverExecutable(chromedriver.toFile())
                    .usingAnyFreePort()
                    .build();
            ChromeDriver driver = new ChromeDriver(service, options);
            driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30)).scriptTimeout(Duration.ofSeconds(30));
            Files.createDirectories(screenshots);
            try (Stream<Path> old = Files.list(screenshots)) {
                for (Path file : old.filter(file -> file.getFileName().toString().endsWith(".png")).toList()) {
                    Files.delete(file);
                }
            }
            return new HeadlessChromium(driver, profile, screenshots);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    WebDriver driver() {
        return driver;
    }

    /** A PNG of the viewport, {@code <name>.png} under the screenshots folder, for a person to look at. */
    Path screenshot(String name) {
        Path file = screenshots.resolve(name + ".png");
        try {
            Files.write(file, driver.getScreenshotAs(OutputType.BYTES));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The whole page, not just the viewport (Chromium's full-page capture through the DevTools protocol). */
    Path fullPageScreenshot(String name) {
        long width = ((Number) driver.executeScript("return document.documentElement.scrollWidth")).longValue();
        long height = ((Number) driver.executeScript("return document.documentElement.scrollHeight")).longValue();
        return screenshot(name, (int) Math.max(width, 1280), (int) Math.min(Math.max(height, 900), 6000));
    }

    /** The page as a window of this size would show it (the top of it), for a picture of a set size. */
    Path screenshot(String name, int width, int height) {
        driver.executeCdpCommand("Emulation.setDeviceMetricsOverride",
                Map.of("width", width, "height", height, "deviceScaleFactor", 1, "mobile", false));
        try {
            return screenshot(name);
        } finally {
            driver.executeCdpCommand("Emulation.clearDeviceMetricsOverride", Map.of());
        }
    }

    @Override
    public void close() {
        try {
            driver.quit();
        } finally {
            deleteQuietly(profile);
        }
    }

    private static void installIfMissing() {
        if (onPath("chromium").isPresent() && onPath("chromedriver").isPresent()) {
            return;
        }
        Path script = LocalRuntimeIT.projectTemplate().resolveSibling(".ci/install-chromium");
        String output;
        int exit;
        try {
            Process process = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true).start();
            process.getOutputStream().close();
            if (!process.waitFor(INSTALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                Assumptions.abort("Chromium is missing and " + script + " did not finish within " + INSTALL_TIMEOUT);
            }
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            exit = process.exitValue();
        } catch (IOException e) {
            Assumptions.abort("Chromium is missing and " + script + " could not run: " + e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Assumptions.abort("interrupted while installing Chromium");
            return;
        }
        Assumptions.assumeTrue(exit == 0 && onPath("chromium").isPresent() && onPath("chromedriver").isPresent(),
                () -> "browser tests skipped: chromium and chromedriver are missing and " + script + " could not install them"
                        + " (exit " + exit + "): " + output);
    }

    private static Optional<Path> onPath(String command) {
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        return Stream.concat(Stream.of(path.split(File.pathSeparator)), Stream.of("/usr/bin", "/usr/local/bin"))
                .filter(dir -> !dir.isBlank())
                .map(dir -> Path.of(dir, command))
                .filter(Files::isExecutable)
                .findFirst();
    }

    private static void deleteQuietly(Path directory) {
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        } catch (IOException e) {
            // A leftover temporary profile is harmless.
        }
    }
}
