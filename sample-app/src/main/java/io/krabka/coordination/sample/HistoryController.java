package io.krabka.coordination.sample;

import java.time.Duration;
import java.time.Instant;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code GET /history?minutes=5}: who held the role in the last minutes, with terms, and
 * the gaps between holders, as the simulated device read them from the committed
 * command log (so every member answers the same).
 */
@RestController
class HistoryController {

    private static final long MAX_MINUTES = RoleHistory.RETENTION.toMinutes();

    private final SimulatedDevice device;

    HistoryController(SimulatedDevice device) {
        this.device = device;
    }

    @GetMapping("/history")
    RoleHistory.History history(@RequestParam(defaultValue = "5") long minutes) {
        if (minutes < 1 || minutes > MAX_MINUTES) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "minutes must be 1.." + MAX_MINUTES);
        }
        return device.history(Instant.now(), Duration.ofMinutes(minutes));
    }
}
