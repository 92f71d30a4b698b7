// Command terraform-provider-null is a real Terraform/OpenTofu provider
// offering null_resource, as HashiCorp's hashicorp/null does: a resource
// whose only effect is its state (an id and the triggers that replace it).
// The tests build it from this source (backendtest.NullProvider), so the
// clients install, start and apply a real plugin from tfmirror-written
// mirrors. It is its own Go module, so its dependencies stay out of
// tfmirror's.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// version is set with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	err := providerserver.Serve(context.Background(), func() provider.Provider { return &nullProvider{} },
		providerserver.ServeOpts{Address: "registry.terraform.io/hashicorp/null", ProtocolVersion: 5})
	if err != nil {
		log.Fatal(err)
	}
}

type nullProvider struct{}

func (p *nullProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "null"
	resp.Version = version
}

func (p *nullProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (p *nullProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *nullProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return &nullResource{} }}
}

func (p *nullProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type nullResource struct{}

type nullModel struct {
	ID       types.String `tfsdk:"id"`
	Triggers types.Map    `tfsdk:"triggers"`
}

func (r *nullResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_resource"
}

func (r *nullResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A resource that does nothing but hold its state; a change of triggers replaces it.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				Description:   "A random number, set when the resource is created.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"triggers": schema.MapAttribute{
				ElementType:   types.StringType,
				Optional:      true,
				Description:   "Values whose change replaces the resource.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			},
		},
	}
}

func (r *nullResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m nullModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		resp.Diagnostics.AddError("null_resource: no random id", err.Error())
		return
	}
	m.ID = types.StringValue(fmt.Sprint(n))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *nullResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (r *nullResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m nullModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *nullResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

func (r *nullResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
