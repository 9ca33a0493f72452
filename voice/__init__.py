"""Voice play: players shout the game's phrases aloud; each microphone's recogniser reports
which phrase was said and when it began, on the game's clock (docs/voice.md).

    from voice.lexicon import load_lexicon
    from voice.microphone import Microphone
    from voice.model import find_model, load_model
    from voice.recogniser import Recogniser

    model = load_model(find_model(args.model))          # once; shared by every recogniser
    lexicon = load_lexicon("configs/voice/fr.yaml")
    with Microphone(device, channel) as mic:
        mic.wait_started()
        recogniser = Recogniser(model, lexicon, ["pas_mou_le_caillou"], clock=mic.clock)
        while playing:
            pcm, start = mic.read()
            for detection in recogniser.accept(pcm, start):
                ...  # detection.intent, detection.onset_s (time.monotonic() seconds)

The submodules are imported on demand: the package itself needs neither Vosk, sounddevice
nor scipy, so keyboard-only play works without them.
"""
