// Why RestartBarrier exists: SVT-AV1 1.4 encoders opened and freed on several threads at once
// crash (its CPU topology, `lp_group`, is a process global that every init fills and every
// teardown frees). Each thread opens an encoder, encodes one grey frame, drains it (SVT's
// deinit hangs without EOS) and frees it, ROUNDS times. LOCK=1 serialises open and free, as
// the barrier does. Measured on Debian 12 (2 cores): unlocked 9 of 25 runs crashed (SIGSEGV at
// libSvtAv1Enc.so.1.4.1+0x23c1be, the address of the hot job's crash; one SIGABRT); locked 0 of 25.
//
//   gcc -O1 -o /tmp/svt_race svt_race.c $(pkg-config --cflags --libs libavcodec libavutil) -lpthread
//   for i in $(seq 20); do N=4 /tmp/svt_race 50 || echo crashed; done       # then with LOCK=1
#include <libavcodec/avcodec.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int lock, rounds;
static void *worker(void *arg) {
    const AVCodec *codec = avcodec_find_encoder_by_name("libsvtav1");
    for (int i = 0; i < rounds; i++) {
        AVCodecContext *c = avcodec_alloc_context3(codec);
        c->width = 320; c->height = 240; c->pix_fmt = AV_PIX_FMT_YUV420P;
        c->time_base = (AVRational){1, 30}; c->framerate = (AVRational){30, 1};
        AVDictionary *o = NULL; av_dict_set(&o, "preset", "8", 0); av_dict_set(&o, "svtav1-params", "lp=1", 0);
        if (lock) pthread_mutex_lock(&m);
        int r = avcodec_open2(c, codec, &o);
        if (lock) pthread_mutex_unlock(&m);
        if (r < 0) { fprintf(stderr, "open failed %d\n", r); exit(2); }
        av_dict_free(&o);
        AVFrame *f = av_frame_alloc(); f->width = 320; f->height = 240; f->format = AV_PIX_FMT_YUV420P;
        av_frame_get_buffer(f, 0); av_frame_make_writable(f);
        for (int pl = 0; pl < 3; pl++) memset(f->data[pl], 128, f->linesize[pl] * (pl ? 120 : 240));
        f->pts = 0; avcodec_send_frame(c, f); av_frame_free(&f);
        avcodec_send_frame(c, NULL);  // EOS first: SVT's deinit hangs without it
        AVPacket *p = av_packet_alloc();
        while (avcodec_receive_packet(c, p) >= 0) av_packet_unref(p);
        av_packet_free(&p);
        if (lock) pthread_mutex_lock(&m);
        avcodec_free_context(&c);
        if (lock) pthread_mutex_unlock(&m);
    }
    return NULL;
}
int main(int argc, char **argv) {
    lock = getenv("LOCK") != NULL; rounds = argc > 1 ? atoi(argv[1]) : 20;
    av_log_set_level(AV_LOG_QUIET);
    int n = getenv("N") ? atoi(getenv("N")) : 4; pthread_t t[16];
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    printf("ok %s\n", lock ? "locked" : "unlocked");
    return 0;
}
