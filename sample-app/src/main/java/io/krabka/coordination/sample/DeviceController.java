package io.krabka.coordination.sample;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /device}: what the simulated device accepted and rejected. */
@RestController
class DeviceController {

    private final SimulatedDevice device;

    DeviceController(SimulatedDevice device) {
        this.device = device;
    }

    @GetMapping("/device")
    SimulatedDevice.DeviceReport device() {
        return device.report();
    }
}
