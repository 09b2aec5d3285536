/* A foreign "game" for the memory finder's tests: a C program we know nothing about from Python.
 *
 * It keeps a player struct on its heap, moved by pad commands read from stdin, plus decoys that a
 * naive search would take for the position: a copy that lags half a second, a mirrored copy
 * (x negated, as a minimap might hold it), a copy scaled by 1/1000, a camera that orbits the
 * player (it moves when only the camera turns), timers, and a random walk. Commands (one a line):
 *
 *   hold LX LY RX RY TICKS   sticks in [-1, 1], TICKS at 30 Hz; answers "ok TICK"
 *   press                    an interaction: sets the next quest flag bit; answers "ok FLAGS"
 *   set NAME VALUE           coins (i32), odd (unaligned f32), mood (i8), big (i64), clock (f64),
 *                            volume (f32, next to two more: a triple that changes only when set)
 *   quit
 *
 * At start it prints one JSON line of addresses, for the tests' assertions only: the finder never
 * reads it. --alloc-mib N also maps and fills N MiB (for the memory-bound test). --stray-copy also keeps a
 * copy of the position, one tick late, amid bytes that differ in every process (a thread's scratch buffer:
 * nothing around it repeats in another run). --lands-late K: after the K-th walk (a hold that moves the player)
 * the player steps down a ledge and is still landing for LANDING_TICKS ticks, its height falling, as a character
 * stepping off a node does: the next stand begins before it has landed.
 * Axes: x and z horizontal, y up (as Minetest); yaw 0 looks along +z, turning right decreases it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LAG_TICKS 15
#define SPEED 5.0f          /* units per second */
#define TURN_DEG 90.0f      /* camera degrees per second at full stick */
#define DT (1.0f / 30.0f)
#define LANDING_TICKS 20    /* 0.67 s: longer than the finder's 0.4 s settle after a walk */
#define LANDING_DROP 0.5f   /* units of height lost while landing */

typedef struct Inventory { int32_t slots[8]; } Inventory;

typedef struct Player {
    const void *kind;        /* points into .rodata: a pointer, differs between runs (PIE) */
    uint32_t type_tag;       /* constant */
    uint32_t session;        /* random per process */
    Inventory *inventory;    /* heap pointer */
    float health, max_health;
    uint32_t moving;         /* 1 while a stick is held */
    float pos[3];            /* x, y (up), z: the truth */
    float vel[3];
    float yaw;               /* facing, degrees */
    uint32_t version;        /* constant */
    char name[12];
} Player;

typedef struct World { uint64_t seed; double gravity; char pad[48]; Player *player; } World;
typedef struct Game { uint32_t magic; uint32_t state; char pad[32]; World *world; } Game;

typedef struct Render { float matrix[12]; float pos[3]; float scale; } Render;     /* lags */
typedef struct Minimap { uint32_t zoom; float pos[3]; uint32_t icon; } Minimap;    /* x mirrored */
typedef struct Units { double ticks; float pos[3]; float unit; } Units;            /* scaled 1/1000 */
typedef struct Camera { float yaw; float pitch; float pos[3]; float fov; } Camera; /* orbits */
typedef struct Progress { uint32_t header; uint32_t flags; uint32_t next_bit; uint32_t footer; } Progress;
#pragma pack(push, 1)
typedef struct Odd { uint8_t lead; float value; uint8_t tail[3]; } Odd;
#pragma pack(pop)
typedef struct Misc { int32_t coins; int8_t mood; int64_t big; double clock; float noise[4]; } Misc;
typedef struct Audio { float volume; float music; float effects; } Audio;  /* changes only when set */

static const char KIND_NAME[] = "player-kind";
Game *g_game;  /* a static root for pointer chains: g_game->world->player->pos */

static float clampf(float v) { return v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v); }

static void *junk(size_t most) { void *p = malloc(16 + (size_t)(rand() % (int)most)); memset(p, 0x5C, 16); return p; }

int main(int argc, char **argv) {
    size_t alloc_mib = 0;
    int stray_copy = 0, lands_late = 0, walks = 0, landing = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--alloc-mib")) alloc_mib = (size_t)atol(argv[i + 1]);
        if (i + 1 < argc && !strcmp(argv[i], "--lands-late")) lands_late = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--stray-copy")) stray_copy = 1;
    }
    srand((unsigned)(time(NULL) ^ (getpid() << 8)));
    for (int i = 0; i < 40 + rand() % 40; i++) junk(4096);  /* the heap layout differs between runs */

    g_game = calloc(1, sizeof(Game));
    g_game->magic = 0x47414D45;
    junk(2048);
    g_game->world = calloc(1, sizeof(World));
    g_game->world->seed = 12345;
    g_game->world->gravity = 9.81;
    junk(2048);
    Player *p = calloc(1, sizeof(Player));
    g_game->world->player = p;
    p->kind = KIND_NAME;
    p->type_tag = 0x59414C50;  /* "PLAY" */
    p->session = (uint32_t)rand() * 2654435761u;
    p->inventory = calloc(1, sizeof(Inventory));
    p->health = p->max_health = 100.0f;
    p->pos[0] = 12.5f; p->pos[1] = 1.5f; p->pos[2] = -40.25f;
    p->version = 7;
    strcpy(p->name, "hero");
    Render *render = calloc(1, sizeof(Render)); junk(512);
    Minimap *minimap = calloc(1, sizeof(Minimap)); junk(512);
    Units *units = calloc(1, sizeof(Units)); junk(512);
    Camera *camera = calloc(1, sizeof(Camera)); junk(512);
    Progress *progress = calloc(1, sizeof(Progress)); junk(512);
    Odd *odd = calloc(1, sizeof(Odd)); junk(512);
    Misc *misc = calloc(1, sizeof(Misc)); junk(512);
    Audio *audio = calloc(1, sizeof(Audio));
    audio->volume = 0.8f; audio->music = 0.5f; audio->effects = 0.5f;
    progress->header = 0xC0FFEE; progress->footer = 0xF00D;
    minimap->zoom = 3; minimap->icon = 9; units->unit = 0.001f; render->scale = 1.0f;
    camera->pitch = -10.0f; camera->fov = 70.0f;
    for (int i = 0; i < 12; i++) render->matrix[i] = (i % 5 == 0) ? 1.0f : 0.0f;
    misc->coins = 250; misc->mood = -3; misc->big = 5000000000LL; odd->value = 3.25f;

    unsigned char *scratch = NULL;
    float *stray = NULL;
    if (stray_copy) {
        scratch = malloc(1024);
        for (int i = 0; i < 1024; i++) scratch[i] = (unsigned char)(rand() >> 7);
        stray = (float *)(scratch + 512);
        memcpy(stray, p->pos, sizeof p->pos);
    }
    float history[LAG_TICKS][3];
    for (int i = 0; i < LAG_TICKS; i++) memcpy(history[i], p->pos, sizeof history[i]);
    float cam_yaw = 30.0f, walk[3] = {100.0f, 5.0f, -7.0f};
    uint64_t tick = 0;

    unsigned char *big = NULL;
    if (alloc_mib) {
        size_t size = alloc_mib << 20;
        big = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (big == MAP_FAILED) { perror("mmap"); return 1; }
        for (size_t i = 0; i < size; i += 4096) {  /* touch every page: floats, small ints, zeros */
            uint32_t page = (uint32_t)(i >> 12);
            if (page % 3 == 0) { float *f = (float *)(big + i); for (int k = 0; k < 1024; k++) f[k] = (float)(page + k) * 0.25f; }
            else if (page % 3 == 1) { uint32_t *w = (uint32_t *)(big + i); for (int k = 0; k < 1024; k++) w[k] = page * 31u + (uint32_t)k; }
            else big[i] = 1;
        }
        *(float *)(big + size / 2 + 4) = 1234.5f;
    }

    printf("{\"pid\": %d, \"player\": %lu, \"pos\": %lu, \"render\": %lu, \"minimap\": %lu, \"units\": %lu, "
           "\"camera\": %lu, \"flags\": %lu, \"coins\": %lu, \"odd\": %lu, \"mood\": %lu, \"big\": %lu, "
           "\"clock\": %lu, \"g_game\": %lu, \"alloc\": %lu, \"alloc_marker\": %lu, \"stray\": %lu}\n",
           (int)getpid(), (unsigned long)p, (unsigned long)p->pos, (unsigned long)render->pos,
           (unsigned long)minimap->pos, (unsigned long)units->pos, (unsigned long)camera->pos,
           (unsigned long)&progress->flags, (unsigned long)&misc->coins, (unsigned long)&odd->value,
           (unsigned long)&misc->mood, (unsigned long)&misc->big, (unsigned long)&misc->clock,
           (unsigned long)&g_game, (unsigned long)big,
           (unsigned long)(big ? big + (alloc_mib << 20) / 2 + 4 : 0), (unsigned long)stray);
    fflush(stdout);

    char line[256], name[32];
    while (fgets(line, sizeof line, stdin)) {
        float lx, ly, rx, ry, value;
        int ticks;
        if (sscanf(line, "hold %f %f %f %f %d", &lx, &ly, &rx, &ry, &ticks) == 5) {
            lx = clampf(lx); ly = clampf(ly); rx = clampf(rx); ry = clampf(ry);
            for (int t = 0; t < ticks; t++, tick++) {
                /* The lag ring holds where the player was before this tick, so no entry equals
                 * the truth at a checkpoint taken the moment a move ends. */
                memmove(history[1], history[0], sizeof(float[3]) * (LAG_TICKS - 1));
                memcpy(history[0], p->pos, sizeof history[0]);
                cam_yaw -= rx * TURN_DEG * DT;
                float moving = sqrtf(lx * lx + ly * ly) > 0.1f;
                float dir = (cam_yaw + atan2f(-lx, ly) * 180.0f / (float)M_PI) * (float)M_PI / 180.0f;
                float step = moving ? SPEED * DT * fminf(1.0f, sqrtf(lx * lx + ly * ly)) : 0.0f;
                p->vel[0] = moving ? sinf(dir) * SPEED : 0.0f;
                p->vel[2] = moving ? cosf(dir) * SPEED : 0.0f;
                p->pos[0] += sinf(dir) * step;
                p->pos[2] += cosf(dir) * step;
                if (moving) p->yaw = dir * 180.0f / (float)M_PI;
                if (!moving && landing > 0) { p->pos[1] -= LANDING_DROP / LANDING_TICKS; landing--; }
                p->moving = moving ? 1 : 0;
                memcpy(render->pos, history[LAG_TICKS - 1], sizeof render->pos);
                if (stray) memcpy(stray, history[0], sizeof p->pos);
                minimap->pos[0] = -p->pos[0]; minimap->pos[1] = p->pos[1]; minimap->pos[2] = p->pos[2];
                for (int k = 0; k < 3; k++) units->pos[k] = p->pos[k] * 0.001f;
                float cy = cam_yaw * (float)M_PI / 180.0f;
                camera->yaw = cam_yaw;
                camera->pos[0] = p->pos[0] - sinf(cy) * 4.0f;
                camera->pos[1] = p->pos[1] + 2.0f;
                camera->pos[2] = p->pos[2] - cosf(cy) * 4.0f;
                misc->clock += DT;
                units->ticks = (double)tick;
                for (int k = 0; k < 3; k++) walk[k] += ((float)(rand() % 1000) - 499.5f) * 0.001f;
                memcpy(misc->noise, walk, sizeof walk);
            }
            if (sqrtf(lx * lx + ly * ly) > 0.1f && ticks > 0 && ++walks == lands_late) landing = LANDING_TICKS;
            printf("ok %lu\n", (unsigned long)tick);
        } else if (!strncmp(line, "press", 5)) {
            progress->flags |= 1u << progress->next_bit;
            progress->next_bit++;
            printf("ok %u\n", progress->flags);
        } else if (sscanf(line, "set %31s %f", name, &value) == 2) {
            if (!strcmp(name, "coins")) misc->coins = (int32_t)value;
            else if (!strcmp(name, "odd")) odd->value = value;
            else if (!strcmp(name, "mood")) misc->mood = (int8_t)value;
            else if (!strcmp(name, "big")) misc->big = (int64_t)value;
            else if (!strcmp(name, "clock")) misc->clock = (double)value;
            else if (!strcmp(name, "volume")) audio->volume = value;
            printf("ok\n");
        } else if (!strncmp(line, "quit", 4)) {
            break;
        } else {
            printf("error unknown command\n");
        }
        fflush(stdout);
    }
    return 0;
}
